package results

import (
	"fmt"
	"strings"
)

// TopologyGuestPair is Environment.Topology's first words for a run
// between two guests on one host (kqbench matrix --vm-peer).
const TopologyGuestPair = "two guests on one host"

// GuestPair records a two-host run whose two hosts were two qemu guests on
// one machine, joined by a virtio-net link (kqbench matrix --vm-peer): two
// kernels, two module builds and a NIC driver with its interrupts and
// offloads, but one machine's CPUs and memory, and a link that is qemu
// copying frames between two processes. The figures compare builds and
// settings within the run; they are not two machines'.
type GuestPair struct {
	// Link is how qemu carried the frames: "tap" (virtio-net headers, so
	// TSO and checksum offload) or "socket" (none), with the link's MTU
	// and virtio-net queue pairs.
	Link       string `json:"link"`
	LinkMTU    int    `json:"link_mtu"`
	LinkQueues int    `json:"link_queues"`
	// Accel is qemu's accelerator of both guests ("kvm", "tcg", ...).
	Accel string `json:"accel"`
	// Client and Server are guest A (kqbench matrix --peer) and guest B
	// (kqbench server).
	Client PairGuest `json:"client"`
	Server PairGuest `json:"server"`
}

// PairGuest is one guest of a GuestPair, as it reported itself.
type PairGuest struct {
	// Name is "A" or "B".
	Name string `json:"name"`
	// Kernel is the release, BootID the kernel's boot ID: two different
	// ones are two kernels.
	Kernel string `json:"kernel"`
	BootID string `json:"boot_id"`
	CPUs   int    `json:"cpus"`
	// Modules are the out-of-tree modules it loaded (quic.ko), none when
	// it had none.
	Modules []PairModule `json:"modules,omitempty"`
	// Device is its end of the link ("eth0"), Driver the kernel driver
	// behind it ("virtio_net"), with its address, MTU, queue pairs in use
	// and offered, and its offloads when the command started.
	Device    string          `json:"device"`
	Driver    string          `json:"driver"`
	Address   string          `json:"address"`
	MTU       int             `json:"mtu"`
	Queues    int             `json:"queues"`
	MaxQueues int             `json:"max_queues"`
	Offloads  map[string]bool `json:"offloads,omitempty"`
	// IRQs are the device's interrupts delivered over the whole run, and
	// the packets and bytes it moved; absent when the guest could not
	// report them (it was stopped or failed).
	IRQs      []PairIRQ `json:"irqs,omitempty"`
	RxPackets uint64    `json:"rx_packets,omitempty"`
	TxPackets uint64    `json:"tx_packets,omitempty"`
	RxBytes   uint64    `json:"rx_bytes,omitempty"`
	TxBytes   uint64    `json:"tx_bytes,omitempty"`
	// Ended says how its command ended ("exit 0", "stopped, exit 143").
	Ended string `json:"ended,omitempty"`
}

// PairModule identifies an out-of-tree module as a guest had it loaded.
type PairModule struct {
	Name       string `json:"name"`
	Version    string `json:"version,omitempty"`
	Srcversion string `json:"srcversion,omitempty"`
	BuildID    string `json:"build_id,omitempty"`
}

// PairIRQ is one interrupt of a guest's link device and how many it took.
type PairIRQ struct {
	IRQ   int    `json:"irq"`
	Name  string `json:"name"`
	Count uint64 `json:"count"`
}

// IRQTotal is the number of interrupts the device took over the run.
func (g *PairGuest) IRQTotal() uint64 {
	var n uint64
	for _, q := range g.IRQs {
		n += q.Count
	}
	return n
}

// ModuleText names the guest's modules ("quic build 3f2a...", or "no
// out-of-tree module").
func (g *PairGuest) ModuleText() string {
	if len(g.Modules) == 0 {
		return "no out-of-tree module"
	}
	var s []string
	for _, m := range g.Modules {
		id := m.BuildID
		if id == "" {
			id = m.Srcversion
		}
		if len(id) > 12 {
			id = id[:12]
		}
		s = append(s, fmt.Sprintf("%s %s", m.Name, id))
	}
	return strings.Join(s, ", ")
}

// TopologyLine is what tables print above the figures of a run between two
// guests on one host, so that nobody takes them for two machines' ("" for
// any other run).
func (e *Environment) TopologyLine() string {
	p := e.GuestPair
	if p == nil {
		return ""
	}
	boot := func(id string) string {
		if len(id) > 8 {
			return id[:8]
		}
		return id
	}
	var irqs string
	if p.Client.IRQs != nil || p.Server.IRQs != nil {
		irqs = fmt.Sprintf(", %d and %d interrupts", p.Client.IRQTotal(), p.Server.IRQTotal())
	}
	return fmt.Sprintf("topology: %s, not two machines (qemu %s, %s link, MTU %d, %d queue(s)): client guest A %s boot %s %s, server guest B %s boot %s %s; %s at both ends%s",
		TopologyGuestPair, p.Accel, p.Link, p.LinkMTU, p.LinkQueues,
		p.Client.Kernel, boot(p.Client.BootID), p.Client.ModuleText(),
		p.Server.Kernel, boot(p.Server.BootID), p.Server.ModuleText(), p.Client.Driver, irqs)
}
