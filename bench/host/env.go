//go:build linux

// Package host reads what a benchmark needs of the machine it runs on:
// the environment a results file records (kernel, CPU, machine kind,
// sysctls, the QUIC module's build, the NIC's setup), the CPU counters a
// sample's window is accounted with (/proc/stat and the process's own,
// per CPU for pinned ends, steal), hardware cycle counters, and the
// pinning of a thread to a CPU. Its records are package results' types.
package host

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/sys/unix"

	"kquic.dev/bench/results"
	"kquic.dev/kmod"
)

// CurrentEnvironment describes this machine.
func CurrentEnvironment() results.Environment {
	e := results.Environment{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Topology: "two network namespaces joined by a veth pair on one host", NICDriver: "veth"}
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
