//go:build linux

package cpio_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kquic.dev/internal/cpio"
	"kquic.dev/internal/testenv"
)

func TestArchiveExtractsWithGNUCpio(t *testing.T) {
	// GNU cpio is the independent reader this test checks against.
	bin := testenv.Tool(t, "cpio", "cpio")
	var buf bytes.Buffer
	w := cpio.NewWriter(&buf)
	src := filepath.Join(t.TempDir(), "src")
	os.WriteFile(src, []byte("copied\n"), 0o751)
	for _, err := range []error{
		w.Dir("a/b", 0o700),
		w.File("a/b/c.txt", 0o644, []byte("hello")),
		w.File("top", 0o600, []byte("odd length!")),
		w.CopyFile("deep/er/bin", src),
		w.Symlink("link", "a/b/c.txt"),
		w.File("empty", 0o644, nil),
		w.Close(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if buf.Len()%4 != 0 {
		t.Errorf("archive length %d is not a multiple of 4", buf.Len())
	}
	dir := t.TempDir()
	cmd := exec.Command(bin, "-idm", "--no-absolute-filenames", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = &buf
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio -i: %v: %s", err, out)
	}
	for name, want := range map[string]string{"a/b/c.txt": "hello", "top": "odd length!", "deep/er/bin": "copied\n", "empty": ""} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "deep/er/bin")); err != nil || st.Mode().Perm() != 0o751 {
		t.Errorf("copied file mode = %v, %v; want 0751", st.Mode(), err)
	}
	if st, err := os.Stat(filepath.Join(dir, "a/b")); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Errorf("dir a/b: %v, %v", st, err)
	}
	if l, err := os.Readlink(filepath.Join(dir, "link")); err != nil || l != "a/b/c.txt" {
		t.Errorf("link = %q, %v", l, err)
	}
	// The listing must hold each directory once, parents before children.
	list := exec.Command(bin, "-t", "--quiet")
	var b2 bytes.Buffer
	w2 := cpio.NewWriter(&b2)
	w2.File("x/y/z", 0o644, nil)
	w2.Dir("x/y", 0o755)
	w2.Close()
	list.Stdin = &b2
	out, err := list.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(out)); strings.Join(got, " ") != "x x/y x/y/z" {
		t.Errorf("listing = %q, want x x/y x/y/z", got)
	}
}

func TestErrorsAreSticky(t *testing.T) {
	var buf bytes.Buffer
	w := cpio.NewWriter(&buf)
	if err := w.CopyFile("x", filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("CopyFile of a missing file succeeded")
	}
	if err := w.File("y", 0o644, []byte("y")); err == nil {
		t.Error("File after a failure succeeded")
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Close = %v, want the first error (naming the missing file)", err)
	}
}
