//go:build linux

// Package topo builds the single-host benchmark topology: two network
// namespaces joined by a veth pair, with the MTU and segmentation offloads
// set per benchmark cell, an impairment of the link (netem: delay, loss,
// reordering, rate; see ParseNetem) if asked, and removes it afterwards. Its
// Device sets the same things on one device of a host, for two-host mode.
package topo

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"kquic.dev/internal/netns"
)

// The addresses of the two ends (198.18.0.0/15 is for benchmarks, RFC 2544).
var (
	ClientAddr = netip.MustParseAddr("198.18.0.1")
	ServerAddr = netip.MustParseAddr("198.18.0.2")
)

const (
	clientDev = "kqb0"
	serverDev = "kqb1"
)

// Topology is a client namespace and a server namespace joined by a veth
// pair.
type Topology struct {
	Client, Server *netns.NS
	hc, hs         *netlink.Handle
}

// New creates the namespaces and the veth pair. It needs root.
func New() (*Topology, error) {
	t := &Topology{}
	var err error
	if t.Client, err = netns.New(); err != nil {
		return nil, err
	}
	if t.Server, err = netns.New(); err != nil {
		t.Close()
		return nil, err
	}
	if t.hc, err = t.Client.Netlink(); err != nil {
		t.Close()
		return nil, err
	}
	if t.hs, err = t.Server.Netlink(); err != nil {
		t.Close()
		return nil, err
	}
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: clientDev, TxQLen: 1000}, PeerName: serverDev, PeerNamespace: netlink.NsFd(t.Server.Handle())}
	if err := t.hc.LinkAdd(veth); err != nil {
		t.Close()
		return nil, fmt.Errorf("topology: create veth pair: %w (does the kernel have veth?)", err)
	}
	for _, e := range []struct {
		h    *netlink.Handle
		dev  string
		addr netip.Addr
	}{{t.hc, clientDev, ClientAddr}, {t.hs, serverDev, ServerAddr}} {
		l, err := e.h.LinkByName(e.dev)
		if err != nil {
			t.Close()
			return nil, err
		}
		a, _ := netlink.ParseAddr(e.addr.String() + "/24")
		if err := e.h.AddrAdd(l, a); err != nil {
			t.Close()
			return nil, fmt.Errorf("topology: address %v: %w", e.addr, err)
		}
		for _, dev := range []string{e.dev, "lo"} {
			ll, err := e.h.LinkByName(dev)
			if err == nil {
				err = e.h.LinkSetUp(ll)
			}
			if err != nil {
				t.Close()
				return nil, fmt.Errorf("topology: bring up %s: %w", dev, err)
			}
		}
	}
	return t, nil
}

// Close removes the namespaces (and with them the veth pair).
func (t *Topology) Close() error {
	for _, h := range []*netlink.Handle{t.hc, t.hs} {
		if h != nil {
			h.Close()
		}
	}
	var errs []error
	for _, ns := range []*netns.NS{t.Client, t.Server} {
		if ns != nil {
			errs = append(errs, ns.Close())
		}
	}
	return errors.Join(errs...)
}

// SetMTU sets the MTU of both ends.
func (t *Topology) SetMTU(mtu int) error {
	for _, d := range t.devices() {
		if err := d.SetMTU(mtu); err != nil {
			return err
		}
	}
	return nil
}

// SetGSO turns segmentation offload on or off on both ends, and says what it
// did. Off means more than the device features: Linux hands TCP's
// super-packets to a device without TSO/GSO and segments them in software
// at the last moment, so the stack still moves 64 KiB packets. Off
// therefore also limits the device's packets to the MTU (gso_max_size) and
// lets TCP build packets of one segment (net.ipv4.tcp_min_tso_segs 1 in the
// device's namespace; its default, 2, would make 2-segment super-packets):
// TCP then builds MSS-sized packets from the start, as a kernel without
// GSO would.
//
// It does not limit the segments per packet (gso_max_segs 1), which gives
// MSS-sized packets too but with an artefact of its own: on a veth pair at
// MTU 1500, iperf3's goodput with it fell from 1400 to 525-580 Mbit/s as
// writes grew from 1 to 64 KiB, where the limit on size gives 1450-1530
// (BenchmarkNoGSOWriteSizes measures the shape; TestNoGSOMakesMSSPackets
// pins the method).
//
// A veth pair is made to behave as a NIC pair does (see VethGSONote): on,
// the stack's super-packets are segmented where a NIC's TSO would cut them,
// at the sending device, and the receiving device rebuilds them with GRO.
func (t *Topology) SetGSO(on bool) (string, error) {
	for _, d := range t.devices() {
		if err := d.SetGSO(on); err != nil {
			return "", err
		}
	}
	return VethGSONote(on), nil
}

// NewPrepared is New with both ends prepared for one configuration
// (Prepare); the topology is removed again on an error.
func NewPrepared(mtu int, gso bool) (*Topology, error) {
	t, err := New()
	if err != nil {
		return nil, err
	}
	if err := t.Prepare(mtu, gso); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// Prepare applies an MTU and a GSO setting to both ends, as a cell of that
// configuration runs (Device.Prepare, for each end).
func (t *Topology) Prepare(mtu int, gso bool) error {
	for _, d := range t.devices() {
		if _, _, err := d.Prepare(mtu, gso); err != nil {
			return err
		}
	}
	return nil
}

// GSONote says what SetGSO does for on or off on a NIC, for the record.
func GSONote(on bool) string {
	if on {
		return "tso and gso on, gso_max_size 65536"
	}
	return "tso and gso off, gso_max_size = MTU, tcp_min_tso_segs 1 (no super-packets in the stack)"
}

// VethGSONote says what SetGSO does for on or off on a veth device, for the
// record. A veth device with TSO hands a 64 KiB TCP packet to its peer
// whole, and without GRO its peer takes each packet in as it comes; a NIC
// pair cuts the packet into MSS-sized frames on the wire (TSO) and the
// receiver rebuilds them (GRO, on by default). So "on" over veth turns
// TSO off and GSO on, which segments the stack's super-packets in software
// at the sending device (where a NIC would in hardware: the sender's CPU
// pays here what a NIC's silicon pays there), and GRO on at both ends (veth
// then receives through NAPI, as a NIC does). What remains different: the
// segmentation's CPU cost, no wire and no interrupts (the receiver's
// processing runs on the sender's CPU unless the two are pinned apart).
// UDP's GSO batches (quic-go's, kernel QUIC's with GSO) are segmented at
// the sending device too, on and off: veth's UDP segmentation offloads
// (tx-udp-segmentation and the UDP-tunnel ones, which the TSO and GSO
// switches leave on) are turned off, so the receiver takes in one datagram
// per segment, as from a NIC.
func VethGSONote(on bool) string {
	if on {
		return "veth as a NIC: tso off, gso on (super-packets segmented at the sending device, UDP's too: tx-udp-segmentation off), gro on, gso_max_size 65536"
	}
	return "tso and gso off, gso_max_size = MTU, tcp_min_tso_segs 1 (no super-packets in the stack; UDP GSO batches segmented at the device: tx-udp-segmentation off); gro on"
}

// Offloads reports the offload state of the client's device, for the record.
func (t *Topology) Offloads() (string, error) { return t.ClientDevice().Offloads() }

// ClientDevice is the client's end of the veth pair.
func (t *Topology) ClientDevice() *Device { return &Device{name: clientDev, ns: t.Client, h: t.hc} }

// ServerDevice is the server's end of the veth pair.
func (t *Topology) ServerDevice() *Device { return &Device{name: serverDev, ns: t.Server, h: t.hs} }

func (t *Topology) devices() []*Device { return []*Device{t.ClientDevice(), t.ServerDevice()} }

// Devices names the veth ends (client, server), for captures and counters.
func Devices() (client, server string) { return clientDev, serverDev }

// UDPSockets opens a UDP socket in each namespace, the server's bound to
// port on ServerAddr with a 64 MiB receive buffer (so that a burst is not
// dropped), for probing what crosses the pair. The caller closes both.
func (t *Topology) UDPSockets(port int) (client, server int, err error) {
	client, server = -1, -1
	err = t.Server.Do(func() (err error) {
		if server, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return err
		}
		_ = unix.SetsockoptInt(server, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 64<<20)
		return unix.Bind(server, &unix.SockaddrInet4{Port: port, Addr: ServerAddr.As4()})
	})
	if err == nil {
		err = t.Client.Do(func() (err error) {
			client, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
			return err
		})
	}
	if err != nil {
		for _, fd := range []int{client, server} {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
		return -1, -1, fmt.Errorf("topology: UDP sockets on port %d: %w", port, err)
	}
	return client, server, nil
}
