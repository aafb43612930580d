//go:build linux

package modbuild_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kmod/debkernel"
	"kquic.dev/kmod/modbuild"
	"kquic.dev/kmod/vm"
)

// copyTestModule copies testdata/kqtestmod (the project's own test module:
// a proc file) to dir.
func copyTestModule(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "kqtestmod")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"kqtestmod.c", "Kbuild"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// moduleBuild runs `kqbench module build` and returns the .ko paths it
// printed and what it said on stderr.
func moduleBuild(t *testing.T, kqbench string, args ...string) ([]string, string) {
	t.Helper()
	cmd := exec.Command(kqbench, append([]string{"module", "build"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("kqbench module build %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	t.Logf("kqbench module build %s: %s: %s", strings.Join(args, " "), time.Since(start).Round(100*time.Millisecond), strings.TrimSpace(lastLine(errb.String())))
	return strings.Fields(out.String()), errb.String()
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return l[len(l)-1]
}

// TestBuildTestModuleForGuest builds the test module with `kqbench module
// build` for the guest kernel twice, from two directories, and gets one
// build (one code hash, one directory); a third call finds it in the cache;
// a build that fails names its log; the guest loads the module and reads
// its proc file. The build root's first
// creation takes minutes (once per cache directory).
func TestBuildTestModuleForGuest(t *testing.T) {
	cfg := testenv.VM(t)
	testenv.ModuleBuildRoot(t)
	kqbench := testenv.Kqbench(t)
	a := copyTestModule(t, filepath.Join(t.TempDir(), "a"))
	b := copyTestModule(t, filepath.Join(t.TempDir(), "another", "longer", "dir"))
	kosA, _ := moduleBuild(t, kqbench, "--rebuild", "--src", a)
	kosB, _ := moduleBuild(t, kqbench, "--rebuild", "--src", b)
	if len(kosA) != 1 || filepath.Base(kosA[0]) != "kqtestmod.ko" {
		t.Fatalf("printed %q, want one kqtestmod.ko", kosA)
	}
	if len(kosB) != 1 || kosB[0] != kosA[0] {
		t.Errorf("two builds of one source in two directories gave %q and %q, want one build", kosA, kosB)
	}
	code, err := kmod.ModuleCodeHash(kosA[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := filepath.Base(filepath.Dir(kosA[0])); got != code {
		t.Errorf("the build is in %s, want the directory named by its code hash %s", filepath.Dir(kosA[0]), code)
	}
	kosC, msg := moduleBuild(t, kqbench, "--src", a)
	if len(kosC) != 1 || kosC[0] != kosA[0] || !strings.Contains(msg, "cached") {
		t.Errorf("a build again without --rebuild gave %q (%s), want %s from the cache", kosC, lastLine(msg), kosA[0])
	}

	// A build that fails names its log and shows its end.
	bad := copyTestModule(t, filepath.Join(t.TempDir(), "bad"))
	f, _ := os.OpenFile(filepath.Join(bad, "kqtestmod.c"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\nkqtestmod_does_not_compile(;\n")
	f.Close()
	out, err := exec.Command(kqbench, "module", "build", "--src", bad).CombinedOutput()
	logPath := regexp.MustCompile(`log (\S+\.log), its end:`).FindSubmatch(out)
	if err == nil || logPath == nil || !bytes.Contains(out, []byte("kqtestmod_does_not_compile")) {
		t.Errorf("a build that fails: %v, said\n%s\nwant the log's path and its end", err, out)
	} else if b, err := os.ReadFile(string(logPath[1])); err != nil || !bytes.Contains(b, []byte("error")) {
		t.Errorf("the failed build's log %s: %v\n%s", logPath[1], err, b)
	}

	cfg.ModuleFiles = []string{kosA[0]}
	cfg.Timeout = 5 * time.Minute
	var gout, gerr bytes.Buffer
	cfg.Stdout, cfg.Stderr = &gout, &gerr
	res, err := vm.Run(context.Background(), cfg, []string{"/bin/cat", "/proc/kqtestmod"})
	if err != nil {
		t.Fatalf("guest: %v\n%s", err, gerr.String())
	}
	if res.ExitCode != 0 || !regexp.MustCompile(`^kqtestmod 42 [0-9]+\n$`).MatchString(gout.String()) {
		t.Fatalf("guest: cat /proc/kqtestmod exited %d with %q (stderr %q), want \"kqtestmod 42 <packets>\\n\"", res.ExitCode, gout.String(), gerr.String())
	}
}

// TestNotAModuleSource: a directory without a Kbuild or Makefile that
// declares obj-m is refused before anything is fetched or built, saying
// where the module's Kbuild is when it is below.
func TestNotAModuleSource(t *testing.T) {
	top := t.TempDir()
	copyTestModule(t, filepath.Join(top, "drivers", "kqtestmod"))
	os.WriteFile(filepath.Join(top, "Makefile"), []byte("all:\n\t$(MAKE) -C drivers/kqtestmod\n"), 0o644)
	_, err := modbuild.Build(context.Background(), modbuild.Options{Src: top, Kernel: cacheIn(t)})
	if err == nil || !strings.Contains(err.Error(), "not a module source: no Kbuild or Makefile with obj-m under "+top+"; give the directory of the module's Kbuild") ||
		!strings.Contains(err.Error(), filepath.Join(top, "drivers", "kqtestmod")) {
		t.Errorf("err = %v, want \"not a module source\" naming %s/drivers/kqtestmod", err, top)
	}
	if _, err := modbuild.Build(context.Background(), modbuild.Options{Src: filepath.Join(top, "nonexistent"), Kernel: cacheIn(t)}); err == nil {
		t.Error("a missing directory built")
	}
	if _, err := modbuild.Build(context.Background(), modbuild.Options{Src: filepath.Join(top, "drivers", "kqtestmod"), MakeVars: []string{"novalue"}, Kernel: cacheIn(t)}); err == nil || !strings.Contains(err.Error(), "NAME=value") {
		t.Errorf("make variable without =: err = %v", err)
	}
}

// cacheIn points the Debian kernel options at a cache of the test's own.
func cacheIn(t *testing.T) debkernel.Options {
	return debkernel.Options{CacheDir: t.TempDir()}
}
