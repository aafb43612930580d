//go:build linux

package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestModuleBuildsOfExportedTrees: one source built in two folders with no
// git checkout around them (as from a release tarball or git archive) gets
// one name, its code, where the files' SHA-256 differ; a file that is not
// ELF is named by its SHA-256.
func TestModuleBuildsOfExportedTrees(t *testing.T) {
	gcc := Tool(t, "gcc", "gcc")
	var names [][]string
	for _, dir := range []string{"a", "b/longer/folder"} {
		d := filepath.Join(t.TempDir(), dir)
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "m.c"), []byte("int counter = 3;\nint work(int x) { return x * counter; }\n"), 0o644)
		cmd := exec.Command(gcc, "-c", "-g", "-O2", "-o", "quic.ko", "m.c")
		cmd.Dir = d
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		names = append(names, moduleBuilds(filepath.Join(d, "quic.ko")))
	}
	if len(names[0]) != 1 || !strings.HasPrefix(names[0][0], "code:") || !slices.Equal(names[0], names[1]) {
		t.Errorf("two builds of one source in two exported trees are named %v and %v, want one code:… name", names[0], names[1])
	}
	notELF := filepath.Join(t.TempDir(), "quic.ko")
	os.WriteFile(notELF, []byte("not a module"), 0o644)
	if got := moduleBuilds(notELF); len(got) != 1 || !strings.HasPrefix(got[0], "sha256:") {
		t.Errorf("a file that is not ELF is named %v, want its sha256:…", got)
	}
	if got := moduleBuilds(""); got != nil {
		t.Errorf("no module: %v", got)
	}
}
