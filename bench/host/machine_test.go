//go:build linux

package host

import (
	"os"
	"strings"
	"testing"

	"kquic.dev/bench/results"
)

// TestCurrentMachine: the fields come from this machine, and its kind
// agrees with what /proc/cpuinfo says (this project's machines and its guest
// are virtual or emulated, so their tables carry the caveat).
func TestCurrentMachine(t *testing.T) {
	m := CurrentMachine("")
	info, _ := os.ReadFile("/proc/cpuinfo")
	switch {
	case strings.Contains(string(info), "QEMU TCG"):
		if m.Kind != results.MachineEmulated {
			t.Errorf("kind %q under TCG", m.Kind)
		}
	case strings.Contains(string(info), " hypervisor"):
		if m.Kind != results.MachineVM {
			t.Errorf("kind %q with the hypervisor flag", m.Kind)
		}
	default:
		if m.Kind != results.MachineHardware {
			t.Errorf("kind %q on hardware", m.Kind)
		}
	}
	if (m.Kind == results.MachineHardware) != (m.Caveat() == "") {
		t.Errorf("kind %q, caveat %q", m.Kind, m.Caveat())
	}
	if m.Cmdline == "" || len(m.Sysctls) == 0 || m.CPUFlags == nil {
		t.Errorf("missing fields: %+v", m)
	}
	if strings.Contains(string(info), " aes ") != containsStr(m.CPUFlags, "aes") {
		t.Errorf("aes flag %v, cpuinfo disagrees", m.CPUFlags)
	}
	t.Logf("%+v", m)
}

func containsStr(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
