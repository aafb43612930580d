//go:build linux

package kmod_test

import (
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

const codeHashSource = `
static int table[4] = {1, 2, 3, 4};
const char *greeting = "hello";
int counter = 7;
extern int other(int);
int work(int x) { counter += table[x & 3]; return other(x) + greeting[0]; }
`

// gccObject compiles src with gcc, with debug information, in a fresh folder
// named dir under the test's temp dir, and returns the object file's bytes.
func gccObject(t *testing.T, dir, src string) []byte {
	t.Helper()
	gcc := testenv.Tool(t, "gcc", "gcc")
	d := filepath.Join(t.TempDir(), dir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "m.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gcc, "-c", "-g", "-O2", "-fno-pic", "-o", "m.o", "m.c")
	cmd.Dir = d
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc in %s: %v\n%s", d, err, out)
	}
	b, err := os.ReadFile(filepath.Join(d, "m.o"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCodeHashSameSourceTwoFolders: two builds of one source in two folders
// differ as files (the debug information holds the folder) but have one
// CodeHash; a change of one constant in the code changes it, and so does a
// change of the function a call relocates to, which leaves the section
// bytes as they were.
func TestCodeHashSameSourceTwoFolders(t *testing.T) {
	a := gccObject(t, "first-build-folder", codeHashSource)
	b := gccObject(t, "another/much/longer/second-build-folder", codeHashSource)
	if sha256.Sum256(a) == sha256.Sum256(b) {
		t.Fatal("the two builds are byte-identical files: the test cannot tell a code hash from a file hash (does gcc still write DW_AT_comp_dir?)")
	}
	ha, err := kmod.CodeHash(a)
	if err != nil {
		t.Fatal(err)
	}
	hb, err := kmod.CodeHash(b)
	if err != nil {
		t.Fatal(err)
	}
	if ha != hb || len(ha) != 32 {
		t.Errorf("one source built in two folders: CodeHash %q and %q, want one 32-digit name", ha, hb)
	}
	changed := []struct{ what, src string }{
		{"a constant in the data", strings.Replace(codeHashSource, "{1, 2, 3, 4}", "{1, 2, 3, 5}", 1)},
		{"a string", strings.Replace(codeHashSource, `"hello"`, `"hellp"`, 1)},
		{"the callee of a call (a relocation only)", strings.ReplaceAll(codeHashSource, "other", "another")},
	}
	for _, c := range changed {
		hc, err := kmod.CodeHash(gccObject(t, "first-build-folder", c.src))
		if err != nil {
			t.Fatal(err)
		}
		if hc == ha {
			t.Errorf("changing %s left CodeHash at %s", c.what, ha)
		}
	}
}

// TestCodeHashBadInput: what is not an ELF object is an error that says so.
func TestCodeHashBadInput(t *testing.T) {
	for _, img := range [][]byte{nil, []byte("#!/bin/sh\n"), []byte("\x7fELF\x02\x01\x01")} {
		if id, err := kmod.CodeHash(img); err == nil || !strings.Contains(err.Error(), "ELF") {
			t.Errorf("kmod.CodeHash(%q) = %q, %v; want an error naming ELF", img, id, err)
		}
	}
	if _, err := kmod.ModuleCodeHash(filepath.Join(t.TempDir(), "absent.ko")); err == nil || !strings.Contains(err.Error(), "absent.ko") {
		t.Errorf("ModuleCodeHash of a missing file: %v, want an error naming it", err)
	}
}

// TestModuleCodeHashDebianModules: the modules of the pinned Debian kernel
// (xz-compressed .ko files) each get a name, the same on every reading, and
// two modules two names.
func TestModuleCodeHashDebianModules(t *testing.T) {
	tr := guestTree(t)
	var ids []string
	mods := []string{"tls", "sch_netem"}
	for _, m := range mods {
		p := tr.Path(m)
		if p == "" {
			t.Fatalf("module %s not in the guest kernel's tree %s", m, tr.Dir)
		}
		id, err := kmod.ModuleCodeHash(p)
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := kmod.ModuleCodeHash(p); again != id {
			t.Errorf("%s: CodeHash %s then %s", p, id, again)
		}
		ids = append(ids, id)
	}
	if ids[0] == ids[1] {
		t.Errorf("%s and %s have one CodeHash %s", mods[0], mods[1], ids[0])
	}
}
