package results

import "fmt"

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
	// Guest says how a qemu guest ran the matrix (kqbench matrix --vm), as
	// the host saw it; nil for a run on the machine itself.
	Guest *GuestRun `json:"guest,omitempty"`
	// GuestPair says the two hosts of a two-host run were two qemu guests
	// on one machine (kqbench matrix --vm-peer): their kernels, modules,
	// link and driver. Topology then starts with TopologyGuestPair.
	GuestPair *GuestPair `json:"guest_pair,omitempty"`
}

// GuestRun is how a guest ran a matrix, recorded by the host that booted
// it.
type GuestRun struct {
	// Accel is qemu's accelerator: "kvm", "tcg" (every vCPU on one host
	// thread) or "tcg-multi" (a host thread per vCPU).
	Accel string `json:"accel"`
	// CPUs is the guest's vCPUs, and Seconds the run's time, boot included.
	CPUs    int     `json:"cpus"`
	Seconds float64 `json:"seconds"`
	// HostStealCores is the time the host's own hypervisor ran something
	// else on the host's CPUs during the run, in cores (the guest's steal
	// is in each sample's CPU), and HostBusyCores the host's busy time:
	// what else shared the machine with the guest.
	HostStealCores float64 `json:"host_steal_cores"`
	HostBusyCores  float64 `json:"host_busy_cores"`
	// CPUUnavailable says why the host's figures are missing.
	CPUUnavailable string `json:"cpu_unavailable,omitempty"`
}

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

// Caveat is the line tables print when the machine is not hardware.
func (m Machine) Caveat() string {
	if m.Comparable() || m.Kind == "" {
		return ""
	}
	return fmt.Sprintf("machine: %s - the figures compare transports on this machine; they are not comparable with hardware", m.Kind)
}

// NIC records a network device's setup, as `ethtool -i/-g/-l/-c` and the
// interrupts' CPUs show it: what a reader needs to reproduce a two-host
// figure. A setting the driver does not report says so.
type NIC struct {
	Device        string `json:"device"`
	Driver        string `json:"driver"`
	DriverVersion string `json:"driver_version,omitempty"`
	Firmware      string `json:"firmware,omitempty"`
	BusInfo       string `json:"bus_info,omitempty"`
	// Rings, Channels and Coalescing are the current settings and maxima,
	// in ethtool's words ("rx 1024/4096, tx 1024/4096").
	Rings      string `json:"rings"`
	Channels   string `json:"channels"`
	Coalescing string `json:"coalescing"`
	// IRQs are the device's interrupts (MSI vectors) and the CPUs each is
	// delivered to; none for a virtual device.
	IRQs []NICIRQ `json:"irqs,omitempty"`
}

// NICIRQ is one interrupt of a NIC and the CPUs it goes to.
type NICIRQ struct {
	IRQ  int    `json:"irq"`
	Name string `json:"name,omitempty"`
	CPUs string `json:"cpus"`
}
