//go:build linux

package bench

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/sys/unix"

	"kquic.dev/kmod"
)

// Environment records what a run ran on, so results can be compared.
type Environment struct {
	Hostname string `json:"hostname"`
	// BootID is the kernel's boot_id: two environments with the same one
	// are the same machine in the same boot.
	BootID        string `json:"boot_id,omitempty"`
	Kernel        string `json:"kernel"`
	KernelVersion string `json:"kernel_version"`
	QUICModule    string `json:"quic_module,omitempty"`
	CPUModel      string `json:"cpu_model"`
	CPUs          int    `json:"cpus"`
	GoVersion     string `json:"go_version"`
	QuicGoVersion string `json:"quic_go_version,omitempty"`
	Kqbench       string `json:"kqbench_version,omitempty"`
	Topology      string `json:"topology"`
	NICDriver     string `json:"nic_driver"`
	// NIC is this host's device of the run (the client end of the veth pair
	// on one host): driver, firmware, rings, channels, coalescing, IRQs.
	NIC *NIC `json:"nic,omitempty"`
	// Transports says which transports could run here, and why not.
	Transports map[string]string `json:"transports"`
	// Machine is the state of the machine: emulated, virtual or hardware,
	// CPU flags, governor, kernel command line and config, sysctls, the
	// QUIC module's build.
	Machine Machine `json:"machine"`
	// Peer is the server host in two-host mode (kqbench server).
	Peer *Environment `json:"peer,omitempty"`
	// PeerIsThisMachine says the "two-host" peer runs on this very machine
	// and boot (the same boot ID): figures of one box, not of two hosts.
	PeerIsThisMachine bool `json:"peer_is_this_machine,omitempty"`
}

// SamePeerWarning is the line tables print for a peer that is this machine.
const SamePeerWarning = "WARNING: the peer is this same machine (same boot ID): these are not two-host figures, both ends shared this machine's CPUs and memory"

// CurrentEnvironment describes this machine.
func CurrentEnvironment() Environment {
	e := Environment{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Topology: "two network namespaces joined by a veth pair on one host", NICDriver: "veth"}
	e.Hostname, _ = os.Hostname()
	e.BootID = readTrim("/proc/sys/kernel/random/boot_id")
	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		e.Kernel = unix.ByteSliceToString(uts.Release[:])
		e.KernelVersion = unix.ByteSliceToString(uts.Version[:])
	}
	e.Machine = CurrentMachine(e.Kernel)
	if m, err := kmod.Loaded("quic"); err == nil {
		e.QUICModule = "loaded"
		if m.Version != "" || m.Srcversion != "" {
			e.QUICModule += " version=" + m.Version + " srcversion=" + m.Srcversion
		}
		if m.BuildID != "" {
			e.QUICModule += " build-id=" + m.BuildID
		}
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				e.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		e.Kqbench = bi.Main.Version
		for _, d := range bi.Deps {
			if d.Path == "github.com/quic-go/quic-go" {
				e.QuicGoVersion = d.Version
			}
		}
	}
	return e
}
