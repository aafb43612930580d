//go:build linux

package profile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// PerfPackage is the Debian package that provides perf.
const PerfPackage = "linux-perf"

// versionedPerf is where Debian installs perf_<version> binaries.
var versionedPerf = "/usr/bin/perf_*"

// FindPerf returns a perf that runs here: perf on $PATH, or, where that is
// Debian's wrapper refusing a kernel it has no perf_<version> for, the
// newest /usr/bin/perf_* binary. Without one it says which package to
// install.
func FindPerf() (string, error) {
	var tried []string
	if p, err := exec.LookPath("perf"); err == nil {
		out, err := exec.Command(p, "version").CombinedOutput()
		if err == nil {
			return p, nil
		}
		tried = append(tried, fmt.Sprintf("%s version: %v: %s", p, err, firstLine(out)))
	}
	versioned, _ := filepath.Glob(versionedPerf)
	sort.Sort(sort.Reverse(sort.StringSlice(versioned)))
	for _, p := range versioned {
		out, err := exec.Command(p, "version").CombinedOutput()
		if err == nil {
			return p, nil
		}
		tried = append(tried, fmt.Sprintf("%s version: %v: %s", p, err, firstLine(out)))
	}
	msg := "profile: perf is not installed: apt-get install --no-install-recommends " + PerfPackage + " (or scripts/deps test)"
	if len(tried) > 0 {
		msg = "profile: no perf runs here (" + strings.Join(tried, "; ") + "); install a perf for this kernel (Debian: " + PerfPackage + ")"
	}
	return "", errors.New(msg)
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	return s[strings.LastIndex(s, "\n")+1:]
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

// hardwareSampling reports whether the CPU can sample on cycles (not in
// most VMs, never under TCG).
func hardwareSampling() bool {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_HARDWARE,
		Config: unix.PERF_COUNT_HW_CPU_CYCLES,
		Size:   uint32(binary.Size(unix.PerfEventAttr{})),
		Sample: DefaultFrequency,
		Bits:   unix.PerfBitFreq | unix.PerfBitDisabled,
	}
	fd, err := unix.PerfEventOpen(&attr, -1, 0, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}
