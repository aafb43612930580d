//go:build linux

package bench

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"kquic.dev/kmod"
)

// Machine kinds, for Environment.Machine.
const (
	MachineHardware = "hardware"
	MachineVM       = "virtual machine"
	MachineEmulated = "emulated CPU (qemu TCG)"
)

// Machine records the state of the machine a run measured on, so that a
// reader can tell what the figures depend on, and whether they can be
// compared with another machine's at all.
type Machine struct {
	// Kind is MachineHardware, MachineVM (the CPU reports a hypervisor) or
	// MachineEmulated (qemu's TCG: every instruction is translated).
	// Figures from the last two are not comparable with hardware.
	Kind string `json:"kind"`
	// CPUFlags lists the flags that decide crypto and copy speed (aes,
	// pclmulqdq, avx, avx2, avx512f, vaes) the CPU has.
	CPUFlags  []string `json:"cpu_flags"`
	Microcode string   `json:"microcode,omitempty"`
	// Governor is cpu0's cpufreq governor, Turbo whether boost is on
	// ("" where the kernel has no cpufreq, as in most VMs).
	Governor string `json:"governor,omitempty"`
	Turbo    string `json:"turbo,omitempty"`
	// SMT is /sys/devices/system/cpu/smt/active; NUMANodes counts nodes.
	SMT       string `json:"smt,omitempty"`
	NUMANodes int    `json:"numa_nodes"`
	// Cmdline is the kernel's command line; Mitigations the CPU
	// vulnerabilities the kernel reports as not "Not affected".
	Cmdline     string   `json:"cmdline"`
	Mitigations []string `json:"mitigations,omitempty"`
	// KernelConfig is the SHA-256 of the kernel's config
	// (/proc/config.gz or /boot/config-<release>), "" where neither exists.
	KernelConfig string `json:"kernel_config_sha256,omitempty"`
	// Sysctls are the networking settings that bound buffers and pick the
	// congestion control.
	Sysctls map[string]string `json:"sysctls"`
	// QUICBuildID is the loaded quic module's GNU build ID, and
	// QUICModuleSHA256 the hash of the $KQUIC_MODULE file it was loaded
	// from (where that is known); both differ between two builds of one
	// source in two folders. QUICModuleCode is that file's kmod.CodeHash,
	// which does not.
	QUICBuildID      string `json:"quic_build_id,omitempty"`
	QUICModuleSHA256 string `json:"quic_module_sha256,omitempty"`
	QUICModuleCode   string `json:"quic_module_code,omitempty"`
}

// Comparable reports whether the figures can stand beside hardware's.
func (m Machine) Comparable() bool { return m.Kind == MachineHardware }

var machineFlags = []string{"aes", "pclmulqdq", "avx", "avx2", "avx512f", "vaes"}

var machineSysctls = []string{
	"net/core/rmem_default", "net/core/rmem_max", "net/core/wmem_default", "net/core/wmem_max",
	"net/ipv4/tcp_rmem", "net/ipv4/tcp_wmem", "net/ipv4/udp_mem", "net/ipv4/tcp_congestion_control",
	"net/core/default_qdisc",
}

// CurrentMachine reads the machine's state.
func CurrentMachine(release string) Machine {
	m := Machine{Kind: MachineHardware, Sysctls: map[string]string{}}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			switch k {
			case "model name":
				if strings.Contains(v, "QEMU TCG") {
					m.Kind = MachineEmulated
				}
			case "microcode":
				m.Microcode = v
			case "flags":
				if m.CPUFlags != nil {
					continue
				}
				have := strings.Fields(v)
				m.CPUFlags = []string{}
				for _, fl := range machineFlags {
					if slices.Contains(have, fl) {
						m.CPUFlags = append(m.CPUFlags, fl)
					}
				}
				if slices.Contains(have, "hypervisor") && m.Kind == MachineHardware {
					m.Kind = MachineVM
				}
			}
		}
		f.Close()
	}
	m.Governor = readTrim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
	if v := readTrim("/sys/devices/system/cpu/cpufreq/boost"); v != "" {
		m.Turbo = map[string]string{"1": "on", "0": "off"}[v]
	} else if v := readTrim("/sys/devices/system/cpu/intel_pstate/no_turbo"); v != "" {
		m.Turbo = map[string]string{"0": "on", "1": "off"}[v]
	}
	m.SMT = readTrim("/sys/devices/system/cpu/smt/active")
	nodes, _ := filepath.Glob("/sys/devices/system/node/node[0-9]*")
	m.NUMANodes = len(nodes)
	m.Cmdline = readTrim("/proc/cmdline")
	vulns, _ := filepath.Glob("/sys/devices/system/cpu/vulnerabilities/*")
	for _, v := range vulns {
		if s := readTrim(v); s != "" && s != "Not affected" {
			m.Mitigations = append(m.Mitigations, filepath.Base(v)+": "+s)
		}
	}
	m.KernelConfig = kernelConfigHash(release)
	for _, s := range machineSysctls {
		if v := readTrim("/proc/sys/" + s); v != "" {
			m.Sysctls[strings.ReplaceAll(s, "/", ".")] = strings.Join(strings.Fields(v), " ")
		}
	}
	if q, err := kmod.Loaded("quic"); err == nil {
		m.QUICBuildID = q.BuildID
	}
	if p := os.Getenv("KQUIC_MODULE"); p != "" && m.QUICBuildID != "" {
		m.QUICModuleSHA256 = fileHash(p)
		m.QUICModuleCode, _ = kmod.ModuleCodeHash(p) // "" where it is not ELF; the SHA-256 still names it
	}
	return m
}

func readTrim(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func fileHash(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

func kernelConfigHash(release string) string {
	if f, err := os.Open("/proc/config.gz"); err == nil {
		defer f.Close()
		if z, err := gzip.NewReader(f); err == nil {
			h := sha256.New()
			if _, err := io.Copy(h, z); err == nil {
				return hex.EncodeToString(h.Sum(nil))
			}
		}
	}
	return fileHash("/boot/config-" + release)
}

// Caveat is the line tables print when the machine is not hardware.
func (m Machine) Caveat() string {
	if m.Comparable() || m.Kind == "" {
		return ""
	}
	return fmt.Sprintf("machine: %s - the figures compare transports on this machine; they are not comparable with hardware", m.Kind)
}
