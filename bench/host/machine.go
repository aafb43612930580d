//go:build linux

package host

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"kquic.dev/bench/results"
	"kquic.dev/kmod"
)

var machineFlags = []string{"aes", "pclmulqdq", "avx", "avx2", "avx512f", "vaes"}

var machineSysctls = []string{
	"net/core/rmem_default", "net/core/rmem_max", "net/core/wmem_default", "net/core/wmem_max",
	"net/ipv4/tcp_rmem", "net/ipv4/tcp_wmem", "net/ipv4/udp_mem", "net/ipv4/tcp_congestion_control",
	"net/core/default_qdisc",
}

// CurrentMachine reads the machine's state.
func CurrentMachine(release string) results.Machine {
	m := results.Machine{Kind: results.MachineHardware, Sysctls: map[string]string{}}
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
					m.Kind = results.MachineEmulated
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
				if slices.Contains(have, "hypervisor") && m.Kind == results.MachineHardware {
					m.Kind = results.MachineVM
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
