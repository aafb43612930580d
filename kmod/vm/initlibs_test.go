//go:build linux

package vm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitLibsOfADynamicBinary: /bin/sh needs its loader and libc, both
// found at paths that exist.
func TestInitLibsOfADynamicBinary(t *testing.T) {
	libs, err := initLibs("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) < 2 || !strings.Contains(libs[0], "ld-linux") {
		t.Fatalf("initLibs(/bin/sh) = %q, want the loader first, then libc", libs)
	}
	var libc bool
	for _, l := range libs {
		if _, err := os.Stat(l); err != nil {
			t.Errorf("%s: %v", l, err)
		}
		libc = libc || strings.HasPrefix(filepath.Base(l), "libc.so")
	}
	if !libc {
		t.Errorf("initLibs(/bin/sh) = %q: no libc", libs)
	}
}

// TestInitLibsErrors: what cannot be an init says so before any boot.
func TestInitLibsErrors(t *testing.T) {
	if _, err := initLibs("/etc/passwd"); err == nil || !strings.Contains(err.Error(), "not an ELF executable") {
		t.Errorf("initLibs(/etc/passwd) = %v", err)
	}
	if _, err := initLibs("/nonexistent"); err == nil {
		t.Error("initLibs(/nonexistent) succeeded")
	}
}
