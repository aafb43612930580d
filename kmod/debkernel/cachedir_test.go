//go:build linux

package debkernel_test

import (
	"os"
	"path/filepath"
	"testing"

	"kquic.dev/kmod/debkernel"
)

// TestProjectRoot: the checkout is found from any directory inside it, a
// nested module of another path does not stop the search, and a directory
// outside any checkout has none.
func TestProjectRoot(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module kquic.dev\n\ngo 1.26.0\n"), 0o644)
	deep := filepath.Join(dir, "a", "b")
	os.MkdirAll(deep, 0o755)
	other := filepath.Join(dir, "examples")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/x\n"), 0o644)
	for _, d := range []string{dir, deep, other} {
		if got := debkernel.ProjectRoot(d); got != dir {
			t.Errorf("ProjectRoot(%s) = %q, want %q", d, got, dir)
		}
	}
	outside := t.TempDir()
	if got := debkernel.ProjectRoot(outside); got != "" {
		t.Errorf("ProjectRoot(%s) = %q outside any checkout", outside, got)
	}
}

// TestDefaultCacheDirIsTheCheckouts: go test runs in the package's
// directory, which is in this checkout, so without $KQUIC_CACHE the cache is
// the checkout's .cache, the one make uses.
func TestDefaultCacheDirIsTheCheckouts(t *testing.T) {
	t.Setenv(debkernel.CacheEnv, "")
	wd, _ := os.Getwd()
	want := filepath.Join(filepath.Dir(filepath.Dir(wd)), ".cache")
	if got := debkernel.DefaultCacheDir(); got != want {
		t.Errorf("DefaultCacheDir() = %q, want %q", got, want)
	}
	t.Setenv(debkernel.CacheEnv, "/elsewhere")
	if got := debkernel.DefaultCacheDir(); got != "/elsewhere" {
		t.Errorf("with $%s set: DefaultCacheDir() = %q", debkernel.CacheEnv, got)
	}
}
