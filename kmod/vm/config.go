//go:build linux

package vm

import (
	"io"
	"time"

	"kquic.dev/internal/ethtool"
	"kquic.dev/kmod"
)

// Config describes the guest to boot and how to run the command in it.
type Config struct {
	// Kernel is the kernel image to boot (a bzImage, such as Debian's vmlinuz).
	Kernel string
	// Modules is the kernel's module tree, the lib/modules/<release> directory
	// with modules.dep. It must hold the 9p modules unless they are built in.
	Modules string
	// Load names modules of the tree to load before the command, with their
	// dependencies ("tls", "sch_netem", "veth"). A name ending in "?" is
	// loaded only if the tree has it ("aesni_intel?").
	Load []string
	// ModuleFiles are out-of-tree module files (quic.ko) to load after Load;
	// their dependencies come from the tree.
	ModuleFiles []string
	// Shares are host directories the guest may write, at the same path.
	// Everything else of the host is visible read-only.
	Shares []string
	// Memory is the guest's memory in MiB (default 2048).
	Memory int
	// CPUs is the number of virtual CPUs (default 2).
	CPUs int
	// Timeout bounds the whole run, boot included (default 10 minutes).
	Timeout time.Duration
	// IdleLimit ends a run whose command has shown no sign of life for that
	// long: no output (the command's or the kernel console's), no status
	// from the guest's init, and qemu all but idle on the host's CPUs. The
	// run then ends early with a [*GuestError] holding the guest's tasks,
	// their kernel stacks and the kernel log (default DefaultIdleLimit; a
	// negative limit turns the watchdog off). A guest that computes in
	// silence keeps qemu busy and is left alone.
	IdleLimit time.Duration
	// Accel is "kvm", "tcg", "tcg-multi" or "auto" (the default: KVM when
	// the host has hardware virtualisation, else TCG). "tcg" runs every vCPU
	// on one host thread; "tcg-multi" runs them in parallel, which is faster
	// but now and then crashes a guest kernel that patches its own code.
	Accel string
	// Qemu is the qemu binary (default qemu-system-x86_64 from PATH).
	Qemu string
	// Init is a binary that calls GuestMain when IsGuestInit, static or
	// dynamically linked (default: $KQVM_INIT_BINARY, else this executable).
	Init string
	// Env is the command's environment (default: this process's).
	Env []string
	// Dir is the command's working directory (default: this process's).
	Dir string
	// Stdin, if set, is the command's standard input, streamed to the guest
	// as it is read; the command sees end of file when Stdin does (default:
	// /dev/null). A reader that never ends keeps the command's stdin open,
	// as a pipe to a long-lived command would.
	Stdin io.Reader
	// Stdout and Stderr receive the command's output (default: discarded).
	Stdout, Stderr io.Writer
	// Notices receives the harness's own lines about the run, each starting
	// with "kqbench vm: " (a boot retried after a kernel panic, a watchdog
	// asking a stalled guest for its stacks); default: Stderr, so that a
	// user of `kqbench vm` sees them beside the command's errors.
	Notices io.Writer
	// Console, if set, receives the kernel's console output as it happens.
	Console io.Writer
	// Forwards make guest ports reachable on the host's loopback (see
	// Forward); the command finds its address in $KQVM_FWD_ADDR.
	Forwards []Forward
}

// Result describes a finished guest run.
type Result struct {
	// Name is the guest's name in a pair ("A", "B"), else empty.
	Name string
	// ExitCode is the command's exit status (128+n when killed by signal n),
	// -1 when it reported none (the guest failed, or Stop ended it).
	ExitCode int
	// Stopped says the host ended the command ([Machine.Stop]).
	Stopped bool
	// Info is what the guest reported of itself once it was up (nil if
	// it never got that far).
	Info *GuestInfo
	// NIC is what a pair's guest's link device did while the command ran
	// (its interrupts and packets), reported when the command ended; nil
	// for a lone guest, or one that never reported it (killed, panicked).
	NIC *NICUsage
	// Accel is the accelerator that ran the guest ("kvm" or "tcg").
	Accel string
	// Boot is the time from starting qemu to starting the command.
	Boot time.Duration
	// Run is the time the command ran.
	Run time.Duration
	// QemuPIDs are the qemu processes the run started (one per boot); none
	// of them is left when the run has ended.
	QemuPIDs []int
}

// GuestInfo is what a guest reports of itself before its command starts:
// enough to tell two guests, their kernels and their modules apart.
type GuestInfo struct {
	// BootID is the kernel's /proc/sys/kernel/random/boot_id, unique per boot.
	BootID string `json:"boot_id"`
	// Kernel is the guest kernel's release (uname -r).
	Kernel string `json:"kernel"`
	// Modules are the Config.ModuleFiles as the guest kernel has them loaded
	// (name, version, srcversion, build ID), in the order given.
	Modules []kmod.LoadedModule `json:"modules,omitempty"`
	// NIC is the guest's end of a pair's link; nil for a lone guest.
	NIC *NIC `json:"nic,omitempty"`
}

// NIC is a guest's network device on a pair's link, as the guest sees it
// once the harness has configured it (before the command starts).
type NIC struct {
	// Dev is the interface name ("eth0").
	Dev string `json:"dev"`
	// Driver is the kernel driver behind it, from ethtool -i ("virtio_net").
	Driver ethtool.DriverInfo `json:"driver"`
	// MAC is its hardware address.
	MAC string `json:"mac"`
	// Addr is its IPv4 address with prefix length ("10.77.0.1/24"); Peer is
	// the other guest's address.
	Addr string `json:"addr"`
	Peer string `json:"peer"`
	// MTU is the device's MTU.
	MTU int `json:"mtu"`
	// Queues is the number of combined (RX and TX) queue pairs in use,
	// and MaxQueues what the device offers (ethtool -l).
	Queues    int `json:"queues"`
	MaxQueues int `json:"max_queues"`
	// Offloads are the device's offload switches after the harness applied
	// Link.Offloads ("tso", "gso", "gro", "tx-checksum", "rx-checksum",
	// "sg", "rx-gro-hw"), as ethtool -k shows them.
	Offloads map[string]bool `json:"offloads"`
}

// notices is where the harness's own lines go: Notices, else Stderr (nil:
// nowhere).
func (c *Config) notices() io.Writer {
	if c.Notices != nil {
		return c.Notices
	}
	return c.Stderr
}
