//go:build linux

package kmod

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"kquic.dev/internal/netns"
)

// IPPROTO_QUIC is the protocol number of the kernel QUIC module's sockets.
// (The full ABI lives in package kquic; this copy only probes for it.)
const ipprotoQUIC = 261

// Feature is the name of a kernel or host feature that [Probe] can check.
type Feature string

// The features kquic's tests and benchmarks need.
const (
	FeatureQUIC          Feature = "quic"           // the QUIC module is loaded and its sockets open
	FeatureTLS           Feature = "tls"            // TCP ULP "tls" (kernel TLS) attaches to a socket
	FeatureNetem         Feature = "netem"          // the netem qdisc is built in, loaded or loadable
	FeatureVeth          Feature = "veth"           // the veth driver is built in, loaded or loadable
	FeatureBTF           Feature = "btf"            // /sys/kernel/btf/vmlinux exists
	FeatureUDPGSO        Feature = "udp-gso"        // UDP_SEGMENT socket option
	FeatureUDPGRO        Feature = "udp-gro"        // UDP_GRO socket option
	FeatureModuleLoading Feature = "module-loading" // the kernel loads modules
	FeatureQemu          Feature = "qemu"           // qemu-system-x86_64 is installed
	FeatureKVM           Feature = "kvm"            // /dev/kvm can create a VM
	FeaturePerf          Feature = "perf"           // perf runs (kqbench matrix --profile)
)

// Features lists every feature in the order `kqbench doctor` shows them.
var Features = []Feature{
	FeatureQUIC, FeatureTLS, FeatureNetem, FeatureVeth, FeatureBTF,
	FeatureUDPGSO, FeatureUDPGRO, FeatureModuleLoading, FeatureQemu, FeatureKVM,
	FeaturePerf,
}

// Result is the outcome of checking one feature.
type Result struct {
	Feature Feature
	// Title is a short human description of the feature.
	Title string
	// Err is nil when the feature is present, else why it is not.
	Err error
	// Detail says more when it is present (a version, a path).
	Detail string
	// Fix says what to do when it is absent.
	Fix string
}

// OK reports whether the feature is present.
func (r Result) OK() bool { return r.Err == nil }

type check struct {
	title, fix string
	probe      func() (string, error)
}

var checks = map[Feature]check{
	FeatureQUIC: {"kernel QUIC module (IPPROTO_QUIC sockets)",
		"build lxin/quic's quic.ko for this kernel and load it (`insmod quic.ko` after udp_tunnel, ip6_udp_tunnel), or run in the guest: KQUIC_MODULE=/path/quic.ko kqbench vm -- ...",
		probeQUIC},
	FeatureTLS: {"kernel TLS (TCP ULP \"tls\")",
		"load the tls module (`modprobe tls`, CONFIG_TLS), or run in the guest: kqbench vm --load tls -- ...",
		probeTLS},
	FeatureNetem: {"netem qdisc (sch_netem)",
		"a kernel with CONFIG_NET_SCH_NETEM (`modprobe sch_netem`), or run in the guest: kqbench vm --load sch_netem -- ...",
		probeNetem},
	FeatureVeth: {"veth pairs",
		"a kernel with CONFIG_VETH (`modprobe veth`), or run in the guest: kqbench vm --load veth -- ...",
		probeVeth},
	FeatureBTF: {"BTF type information",
		"a kernel built with CONFIG_DEBUG_INFO_BTF (Debian's kernels have it; the guest kernel does)",
		probeBTF},
	FeatureUDPGSO: {"UDP GSO (UDP_SEGMENT)",
		"a kernel of 4.18 or later",
		func() (string, error) { return "", probeUDPOpt(unix.UDP_SEGMENT, 1200, "UDP_SEGMENT") }},
	FeatureUDPGRO: {"UDP GRO (UDP_GRO)",
		"a kernel of 5.0 or later",
		func() (string, error) { return "", probeUDPOpt(unix.UDP_GRO, 1, "UDP_GRO") }},
	FeatureModuleLoading: {"loadable kernel modules",
		"this kernel cannot load modules: run kernel tests in the guest (`make test` does), with `kqbench vm`",
		probeModuleLoading},
	FeatureQemu: {"qemu for the VM harness",
		"apt-get install qemu-system-x86",
		func() (string, error) {
			p, err := exec.LookPath("qemu-system-x86_64")
			return p, err
		}},
	FeatureKVM: {"KVM acceleration for the VM harness",
		"none needed: the harness falls back to TCG (slower); for KVM the host needs /dev/kvm with nested virtualisation",
		probeKVM},
	FeaturePerf: {"perf for kqbench matrix --profile",
		"apt-get install --no-install-recommends linux-perf (Debian; or scripts/deps test)",
		probePerf},
}

// probePerf runs perf version: Debian's perf may be a wrapper that refuses
// a kernel it has no perf_<version> for.
func probePerf() (string, error) {
	p, err := exec.LookPath("perf")
	if err != nil {
		return "", err
	}
	out, err := exec.Command(p, "version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s version: %v: %s", p, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// Probe checks one feature, returning nil when it is present.
func Probe(f Feature) error {
	c, ok := checks[f]
	if !ok {
		return fmt.Errorf("unknown kernel feature %q (known: %s)", f, featureNames())
	}
	_, err := c.probe()
	return err
}

// ParseFeature turns a name into a Feature, rejecting unknown names.
func ParseFeature(name string) (Feature, error) {
	f := Feature(strings.TrimSpace(name))
	if _, ok := checks[f]; !ok {
		return "", fmt.Errorf("unknown kernel feature %q (known: %s)", name, featureNames())
	}
	return f, nil
}

func featureNames() string {
	var s []string
	for _, f := range Features {
		s = append(s, string(f))
	}
	return strings.Join(s, ", ")
}

// Check probes every feature in [Features].
func Check() []Result {
	var out []Result
	for _, f := range Features {
		c := checks[f]
		detail, err := c.probe()
		r := Result{Feature: f, Title: c.title, Err: err, Detail: detail}
		if err != nil {
			r.Fix = c.fix
		}
		out = append(out, r)
	}
	return out
}

func probeQUIC() (string, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, ipprotoQUIC)
	if err != nil {
		if errors.Is(err, unix.EPROTONOSUPPORT) || errors.Is(err, unix.ESOCKTNOSUPPORT) {
			return "", fmt.Errorf("socket(AF_INET, SOCK_DGRAM, 261): %w: the QUIC module is not loaded", err)
		}
		return "", fmt.Errorf("socket(AF_INET, SOCK_DGRAM, 261): %w", err)
	}
	unix.Close(fd)
	m, err := Loaded("quic")
	if err != nil {
		return "IPPROTO_QUIC sockets open", nil
	}
	if m.Version == "" && m.Srcversion == "" {
		return "loaded (this build carries no version or srcversion)", nil
	}
	return fmt.Sprintf("loaded, version %q, srcversion %s", m.Version, m.Srcversion), nil
}

// probeTLS attaches the "tls" ULP to a connected loopback TCP socket, which is
// what kernel TLS needs first (and what makes the kernel autoload tls.ko).
func probeTLS() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("TLS ULP probe: listen on loopback: %w (is lo up?)", err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return "", fmt.Errorf("TLS ULP probe: %w", err)
	}
	defer c.Close()
	if s, err := ln.Accept(); err == nil {
		defer s.Close()
	}
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		return "", err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_ULP, "tls")
	}); err != nil {
		return "", err
	}
	if serr != nil {
		return "", fmt.Errorf("setsockopt(TCP_ULP, \"tls\"): %w: kernel TLS is not available", serr)
	}
	return "TCP_ULP \"tls\" attaches", nil
}

// probeVeth creates a veth pair in a throwaway network namespace.
func probeVeth() (string, error) {
	return inScratchNetns(func(h *netlink.Handle) (string, error) {
		v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "kqprobe0"}, PeerName: "kqprobe1"}
		if err := h.LinkAdd(v); err != nil {
			return "", fmt.Errorf("create a veth pair: %w", err)
		}
		return "veth pair created in a scratch namespace", nil
	})
}

// probeNetem adds a netem qdisc to loopback in a throwaway network namespace.
func probeNetem() (string, error) {
	return inScratchNetns(func(h *netlink.Handle) (string, error) {
		lo, err := h.LinkByName("lo")
		if err != nil {
			return "", err
		}
		q := netlink.NewNetem(netlink.QdiscAttrs{LinkIndex: lo.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
			netlink.NetemQdiscAttrs{Latency: 1000})
		if err := h.QdiscAdd(q); err != nil {
			return "", fmt.Errorf("add a netem qdisc: %w", err)
		}
		return "netem qdisc added in a scratch namespace", nil
	})
}

func inScratchNetns(fn func(h *netlink.Handle) (string, error)) (string, error) {
	ns, err := netns.New()
	if err != nil {
		return "", err
	}
	defer ns.Close()
	h, err := ns.Netlink()
	if err != nil {
		return "", err
	}
	defer h.Close()
	return fn(h)
}

func probeBTF() (string, error) {
	st, err := os.Stat("/sys/kernel/btf/vmlinux")
	if err != nil {
		return "", fmt.Errorf("no /sys/kernel/btf/vmlinux: the kernel has no BTF (CONFIG_DEBUG_INFO_BTF)")
	}
	return fmt.Sprintf("/sys/kernel/btf/vmlinux, %d KiB", st.Size()/1024), nil
}

func probeUDPOpt(opt, val int, name string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("UDP socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_UDP, opt, val); err != nil {
		return fmt.Errorf("setsockopt(SOL_UDP, %s): %w", name, err)
	}
	return nil
}

func probeModuleLoading() (string, error) {
	if err := moduleLoadingErr(); err != nil {
		return "", err
	}
	return "/proc/modules present, modules_disabled=0", nil
}

func moduleLoadingErr() error {
	if _, err := os.Stat("/proc/modules"); err != nil {
		return fmt.Errorf("no /proc/modules: this kernel was built without module support")
	}
	b, err := os.ReadFile("/proc/sys/kernel/modules_disabled")
	if err == nil && strings.TrimSpace(string(b)) == "1" {
		return fmt.Errorf("module loading is disabled (kernel.modules_disabled=1)")
	}
	return nil
}

// KVM ioctls from <linux/kvm.h>.
const (
	kvmGetAPIVersion = 0xAE00
	kvmCreateVM      = 0xAE01
)

func probeKVM() (string, error) {
	// /dev/kvm may come from a paravirtual hypervisor (kvm_pvm) that runs
	// only guests built for it; ordinary guests need kvm_intel or kvm_amd.
	hw := ""
	for _, m := range []string{"kvm_intel", "kvm_amd"} {
		if _, err := os.Stat(filepath.Join(sysModuleDir, m)); err == nil {
			hw = m
		}
	}
	if hw == "" {
		return "", fmt.Errorf("no hardware virtualisation (neither kvm_intel nor kvm_amd is loaded)")
	}
	fd, err := unix.Open("/dev/kvm", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("open /dev/kvm: %w", err)
	}
	defer unix.Close(fd)
	v, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), kvmGetAPIVersion, 0)
	if errno != 0 || v != 12 {
		return "", fmt.Errorf("/dev/kvm: KVM_GET_API_VERSION gave %d (%v), want 12", v, errno)
	}
	vm, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), kvmCreateVM, 0)
	if errno != 0 {
		return "", fmt.Errorf("/dev/kvm: KVM_CREATE_VM: %w", errno)
	}
	unix.Close(int(vm))
	return "/dev/kvm creates VMs (" + hw + ")", nil
}
