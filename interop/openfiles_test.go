//go:build unix

package interop

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestProgramsKeepOpenFileLimit: a program the runner starts may open as
// many files as this process's hard limit allows, not the soft limit the Go
// runtime gives child processes back (1024 in the guest, where ngtcp2's
// server ran out of them in multiplexing).
func TestProgramsKeepOpenFileLimit(t *testing.T) {
	keepOpenFileLimit()
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-c", "ulimit -n").Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(string(out))
	if want := strconv.FormatUint(uint64(r.Max), 10); got != want && got != "unlimited" {
		t.Errorf("a child's open file limit is %s, want the hard limit %s", got, want)
	}
}
