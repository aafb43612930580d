//go:build linux

package modbuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path, s string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestContentHashLeavesOutBuildArtifacts: a tree built in place hashes as
// the clean tree, and its copy leaves the artifacts behind; a change of a
// source or a file's name changes the hash.
func TestContentHashLeavesOutBuildArtifacts(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "m.c"), "int x;\n")
	write(t, filepath.Join(dir, "Kbuild"), "obj-m += m.o\n")
	write(t, filepath.Join(dir, "include", "m.h"), "#define M 1\n")
	clean, err := contentHash(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"m.o", "m.ko", "m.mod", "m.mod.c", ".m.o.cmd", "modules.order", "Module.symvers", ".git/HEAD"} {
		write(t, filepath.Join(dir, f), "built")
	}
	if built, _ := contentHash(dir); built != clean {
		t.Errorf("build artifacts changed the hash")
	}
	cp := filepath.Join(t.TempDir(), "copy")
	if err := copySource(dir, cp); err != nil {
		t.Fatal(err)
	}
	if h, _ := contentHash(cp); h != clean {
		t.Errorf("the copy hashes differently")
	}
	if _, err := os.Stat(filepath.Join(cp, "m.o")); err == nil {
		t.Errorf("the copy has m.o")
	}
	write(t, filepath.Join(dir, "include", "m.h"), "#define M 2\n")
	if h, _ := contentHash(dir); h == clean {
		t.Errorf("a changed header kept the hash")
	}
}

// TestObjM: the Kbuild goal lines that make a module directory.
func TestObjM(t *testing.T) {
	for s, want := range map[string]bool{
		"obj-m += m.o\n":                    true,
		"obj-m := m.o\n":                    true,
		"obj-$(CONFIG_IP_QUIC) += quic.o\n": true,
		"  obj-${CONFIG_FOO} = foo.o\n":     true,
		"obj-y += core.o\n":                 false,
		"# obj-m += m.o\n":                  false,
		"all:\n\tmake\n":                    false,
	} {
		if got := objM.MatchString(s); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}

// TestMakeVarDirectoryWidensTheCopy: a make variable naming a directory
// above the module's (its tree's top) is copied with it and points at the
// copy, and the cache key does not depend on where the tree lies.
func TestMakeVarDirectoryWidensTheCopy(t *testing.T) {
	keys := map[string]bool{}
	for _, base := range []string{t.TempDir(), filepath.Join(t.TempDir(), "x", "y")} {
		top := filepath.Join(base, "tree")
		mod := filepath.Join(top, "net", "m")
		write(t, filepath.Join(mod, "Kbuild"), "obj-$(CONFIG_M) += m.o\n")
		write(t, filepath.Join(mod, "m.c"), "#include <m.h>\n")
		write(t, filepath.Join(top, "include", "m.h"), "#define M 1\n")
		o := &Options{Src: mod, MakeVars: []string{"TOP=" + top, "CONFIG_M=m", "OTHER=/usr"}}
		s, err := resolveSource(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if s.top != top || s.modRel != filepath.Join("net", "m") {
			t.Errorf("copies %s with the module at %s, want %s and net/m", s.top, s.modRel, top)
		}
		if !s.vars[0].inTree || s.vars[0].rel != "." || s.vars[1].inTree || s.vars[2].inTree {
			t.Errorf("vars %+v: want only TOP in the tree", s.vars)
		}
		keys[cacheKey(s, &builder{release: "r", toolchain: []string{"gcc"}})] = true
	}
	if len(keys) != 1 {
		t.Errorf("one tree in two places has %d cache keys, want 1", len(keys))
	}
}

// TestRefExportsTheCommit: --ref builds the commit's files, not the
// checkout's, and is named by the git tree.
func TestRefExportsTheCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	write(t, filepath.Join(repo, "mod", "Kbuild"), "obj-m += m.o\n")
	write(t, filepath.Join(repo, "mod", "m.c"), "int v = 1;\n")
	git("add", ".")
	git("commit", "-q", "-m", "v1")
	git("tag", "v1")
	write(t, filepath.Join(repo, "mod", "m.c"), "int v = 2;\n")
	o := &Options{Src: filepath.Join(repo, "mod"), Ref: "v1"}
	s, err := resolveSource(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.hash) < len("git-tree:")+40 || s.hash[:9] != "git-tree:" {
		t.Errorf("hash %q, want git-tree:…", s.hash)
	}
	dst := filepath.Join(t.TempDir(), "src")
	if err := s.export(context.Background(), "v1", dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "m.c")); string(b) != "int v = 1;\n" {
		t.Errorf("exported m.c = %q, want v1's", b)
	}
	if _, err := resolveSource(context.Background(), &Options{Src: o.Src, Ref: "nosuchref"}); err == nil {
		t.Error("an unknown ref resolved")
	}
}
