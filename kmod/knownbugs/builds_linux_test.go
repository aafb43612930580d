package knownbugs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A module file in a git repository that is not lxin/quic (a cache inside
// another project) is named by its code alone; in a checkout of lxin/quic's
// layout, by the commit too.
func TestSourceCommitOnlyInLxinQuic(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	for _, tc := range []struct {
		layout string
		want   bool
	}{{"cache/modules/x", false}, {"modules/net/quic", true}} {
		root := t.TempDir()
		run := func(args ...string) {
			cmd := exec.Command(git, append([]string{"-C", root, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		run("init", "-q")
		dir := filepath.Join(root, tc.layout)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "quic.ko"), []byte("not ELF"), 0o644)
		run("add", ".")
		run("commit", "-qm", "x")
		got := sourceCommit(filepath.Join(dir, "quic.ko"))
		if (got != "") != tc.want || tc.want && !strings.HasPrefix(got, "lxin/quic@") {
			t.Errorf("%s: sourceCommit = %q, want a commit: %v", tc.layout, got, tc.want)
		}
	}
}
