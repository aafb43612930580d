//go:build linux

package modbuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// lxinMakefileAm is lxin/quic's modules/Makefile.am (its all: goal) as of
// 2025-10, the form the recipe is read from.
const lxinMakefileAm = `EXTRA_DIST	= include net
MODULES		= quic_unit_test quic_sample_test quic

all:
	$(MAKE) -C $(KERNEL_BUILD) W=1 M=$(CURDIR)/net/quic modules \
		ROOTDIR=$(CURDIR) CONFIG_IP_QUIC=m CONFIG_IP_QUIC_TEST=m

clean:
	$(MAKE) -C $(KERNEL_BUILD) M=$(CURDIR)/net/quic clean
`

// TestParseRecipe: the kbuild call of lxin/quic's automake file gives the
// module's directory and its variables; a file without one gives none.
func TestParseRecipe(t *testing.T) {
	rel, vars, ok := parseRecipe([]byte(lxinMakefileAm))
	if !ok || rel != "net/quic" || strings.Join(vars, " ") != "W=1 ROOTDIR=$(CURDIR) CONFIG_IP_QUIC=m CONFIG_IP_QUIC_TEST=m" {
		t.Errorf("got %q %q %v", rel, vars, ok)
	}
	if _, _, ok := parseRecipe([]byte("all:\n\t$(MAKE) -C $(KERNEL_BUILD) M=$(CURDIR)/net/quic clean\n")); ok {
		t.Error("a clean goal read as the build")
	}
	if _, vars, _ := parseRecipe([]byte("all:\n\tmake -C $(KDIR) M=$(CURDIR)/m modules X=$(FOO) Y=1\n")); strings.Join(vars, " ") != "Y=1" {
		t.Errorf("a value naming another make variable was kept: %q", vars)
	}
}

// TestRecipeOfTreeTop: --src at the top of an lxin/quic-style tree (and at
// its modules directory) builds its module as the tree's automake file says,
// at each commit as that commit's file says; a module directory, or make
// variables given, are left as they are.
func TestRecipeOfTreeTop(t *testing.T) {
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
	write(t, filepath.Join(repo, "modules", "Makefile.am"), strings.Replace(lxinMakefileAm, "W=1 ", "", 1))
	write(t, filepath.Join(repo, "modules", "net", "quic", "Makefile"), "obj-$(CONFIG_IP_QUIC) += quic.o\n")
	write(t, filepath.Join(repo, "modules", "net", "quic", "quic.c"), "int v;\n")
	write(t, filepath.Join(repo, "modules", "include", "uapi", "linux", "quic.h"), "\n")
	git("add", ".")
	git("commit", "-q", "-m", "v1")
	git("tag", "v1")
	write(t, filepath.Join(repo, "modules", "Makefile.am"), lxinMakefileAm)
	git("commit", "-q", "-am", "W=1")

	mods := filepath.Join(repo, "modules")
	for _, c := range []struct{ src, ref, want string }{
		{repo, "", "W=1 ROOTDIR=" + mods + " CONFIG_IP_QUIC=m CONFIG_IP_QUIC_TEST=m"},
		{mods, "", "W=1 ROOTDIR=" + mods + " CONFIG_IP_QUIC=m CONFIG_IP_QUIC_TEST=m"},
		{repo, "v1", "ROOTDIR=" + mods + " CONFIG_IP_QUIC=m CONFIG_IP_QUIC_TEST=m"},
	} {
		o := &Options{Src: c.src, Ref: c.ref}
		o.defaults()
		if err := applyRecipe(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if o.Src != filepath.Join(mods, "net", "quic") || strings.Join(o.MakeVars, " ") != c.want {
			t.Errorf("--src %s --ref %q: builds %s with %q, want %s/net/quic with %q", c.src, c.ref, o.Src, o.MakeVars, mods, c.want)
		}
		if _, err := resolveSource(context.Background(), o); err != nil {
			t.Errorf("--src %s --ref %q: %v", c.src, c.ref, err)
		}
	}
	for _, o := range []*Options{
		{Src: filepath.Join(mods, "net", "quic")},
		{Src: repo, MakeVars: []string{"CONFIG_IP_QUIC=m"}},
	} {
		src, vars := o.Src, len(o.MakeVars)
		o.defaults()
		applyRecipe(context.Background(), o)
		if o.Src != src || len(o.MakeVars) != vars {
			t.Errorf("%+v: the recipe was applied", o)
		}
	}
}

// TestParseSource: src:DIR and src:DIR@REF, ~/ expanded, a directory whose
// name has an @ kept whole.
func TestParseSource(t *testing.T) {
	home, _ := os.UserHomeDir()
	at := filepath.Join(t.TempDir(), "a@b")
	os.MkdirAll(at, 0o755)
	for arg, want := range map[string][2]string{
		"src:/tmp/quic@v1":              {"/tmp/quic", "v1"},
		"src:/tmp/quic@origin/main":     {"/tmp/quic", "origin/main"},
		"src:/tmp/quic":                 {"/tmp/quic", ""},
		"src:~/src/quic@03a9c7c":        {filepath.Join(home, "src/quic"), "03a9c7c"},
		"src:" + at:                     {at, ""},
		"src:" + at + "@HEAD":           {at, "HEAD"},
		"src:relative/dir@0123456789ab": {"relative/dir", "0123456789ab"},
	} {
		dir, ref, err := ParseSource(arg)
		if err != nil || dir != want[0] || ref != want[1] {
			t.Errorf("%s: %q %q %v, want %q %q", arg, dir, ref, err, want[0], want[1])
		}
	}
	for _, bad := range []string{"src:", "src:/tmp/quic@", "/tmp/quic.ko", "src:@v1"} {
		if _, _, err := ParseSource(bad); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}
