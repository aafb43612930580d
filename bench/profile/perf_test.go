//go:build linux

package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindPerf: without perf the error names the package to install; a
// perf that does not run (as Debian's wrapper refusing a kernel it has no
// perf_<version> for) is not taken, and its complaint is passed on.
func TestFindPerf(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	defer func(g string) { versionedPerf = g }(versionedPerf)
	versionedPerf = filepath.Join(dir, "perf_*")
	_, err := FindPerf()
	if err == nil || !strings.Contains(err.Error(), "apt-get install --no-install-recommends "+PerfPackage) {
		t.Errorf("no perf: error %v, want one naming %s", err, PerfPackage)
	}
	wrapper := "#!/bin/sh\necho 'WARNING: perf not found for kernel 7.3.4+deb13'\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "perf"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = FindPerf()
	if err == nil || !strings.Contains(err.Error(), "perf not found for kernel 7.3.4+deb13") || !strings.Contains(err.Error(), PerfPackage) {
		t.Errorf("refusing wrapper: error %v, want its complaint and the package", err)
	}
	// Debian's versioned binary beside the refusing wrapper is taken.
	if err := os.WriteFile(filepath.Join(dir, "perf_6.1"), []byte("#!/bin/sh\necho perf version 6.1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := FindPerf(); err != nil || p != filepath.Join(dir, "perf_6.1") {
		t.Errorf("a versioned perf beside a refusing wrapper: %q, %v", p, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "perf"), []byte("#!/bin/sh\necho perf version 6.1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := FindPerf(); err != nil || p != filepath.Join(dir, "perf") {
		t.Errorf("a perf that runs: %q, %v", p, err)
	}
}
