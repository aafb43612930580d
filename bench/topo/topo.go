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
	"os"
	"path/filepath"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"kquic.dev/internal/ethtool"
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
// (TestNoGSOGoodputDoesNotFall checks the shape).
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

// Device is one network device whose MTU and offloads a benchmark sets: an
// end of the veth pair, or a real NIC in two-host mode.
type Device struct {
	name  string
	ns    *netns.NS // nil: the process's namespace
	h     *netlink.Handle
	own   bool   // h was opened by OpenDevice
	saved *state // the settings to put back, for OpenDevice's devices
}

// state is what a benchmark changes on a device.
type state struct {
	mtu, segs, size int
	tso, gso, gro   bool
	minTSOSegs      string // net.ipv4.tcp_min_tso_segs of the namespace
}

// OpenDevice opens the named device in ns (nil: this process's network
// namespace) and remembers its MTU and offloads, which Restore and Close put
// back. It needs root to change anything.
func OpenDevice(name string, ns *netns.NS) (*Device, error) {
	d := &Device{name: name, ns: ns, own: true}
	var err error
	if ns != nil {
		d.h, err = ns.Netlink()
	} else {
		d.h, err = netlink.NewHandle()
	}
	if err != nil {
		return nil, fmt.Errorf("device %s: netlink: %w", name, err)
	}
	l, err := d.h.LinkByName(name)
	if err != nil {
		d.h.Close()
		return nil, fmt.Errorf("device %s: %w (see `ip link` for the devices of this host)", name, err)
	}
	st := &state{mtu: l.Attrs().MTU, segs: int(l.Attrs().GSOMaxSegs), size: int(l.Attrs().GSOMaxSize)}
	err = d.Do(func() (err error) {
		if b, err := os.ReadFile(minTSOSegsPath); err == nil {
			st.minTSOSegs = strings.TrimSpace(string(b))
		}
		if st.tso, err = ethtool.Get(name, ethtool.TSO); err != nil {
			return err
		}
		if st.gso, err = ethtool.Get(name, ethtool.GSO); err != nil {
			return err
		}
		st.gro, err = ethtool.Get(name, ethtool.GRO)
		return err
	})
	if err != nil {
		d.h.Close()
		return nil, fmt.Errorf("device %s: %w", name, err)
	}
	d.saved = st
	return d, nil
}

// Name is the device's name.
func (d *Device) Name() string { return d.name }

// Do runs fn in the device's network namespace, where the sockets of its
// end of a benchmark belong.
func (d *Device) Do(fn func() error) error {
	if d.ns == nil {
		return fn()
	}
	return d.ns.Do(fn)
}

func (d *Device) link() (netlink.Link, error) {
	l, err := d.h.LinkByName(d.name)
	if err != nil {
		return nil, fmt.Errorf("topology: device %s: %w", d.name, err)
	}
	return l, nil
}

// MTU is the device's current MTU.
func (d *Device) MTU() (int, error) {
	l, err := d.link()
	if err != nil {
		return 0, err
	}
	return l.Attrs().MTU, nil
}

// SetMTU sets the device's MTU.
func (d *Device) SetMTU(mtu int) error {
	l, err := d.link()
	if err != nil {
		return err
	}
	if err := d.h.LinkSetMTU(l, mtu); err != nil {
		return fmt.Errorf("topology: MTU %d on %s: %w (the device refuses it)", mtu, d.name, err)
	}
	return nil
}

// SetGSO turns the device's segmentation offload on or off; see
// Topology.SetGSO for what off means, and VethGSONote for what on means
// on a veth device.
func (d *Device) SetGSO(on bool) error {
	veth := d.isVeth()
	if veth {
		if err := d.segmentUDPInSoftware(); err != nil {
			return err
		}
	}
	if on {
		if veth {
			return d.setOffloads(65535, 65536, "2", false, true, &on)
		}
		return d.setOffloads(65535, 65536, "2", true, true, nil)
	}
	mtu, err := d.MTU()
	if err != nil {
		return err
	}
	var gro *bool
	if veth {
		gro = new(bool)
		*gro = true
	}
	return d.setOffloads(65535, mtu, "1", false, false, gro)
}

// isVeth reports whether the device is one end of a veth pair.
func (d *Device) isVeth() bool {
	l, err := d.link()
	return err == nil && l.Type() == "veth"
}

// minTSOSegsPath is the sysctl of the fewest segments TCP puts in a packet
// it builds for GSO.
const minTSOSegsPath = "/proc/sys/net/ipv4/tcp_min_tso_segs"

// setOffloads applies the limits and switches; gro, if set, switches GRO
// (nil leaves it as it is, as on a NIC).
func (d *Device) setOffloads(segs, size int, minTSOSegs string, tso, gso bool, gro *bool) error {
	l, err := d.link()
	if err != nil {
		return err
	}
	if err := d.h.LinkSetGSOMaxSegs(l, segs); err != nil {
		return fmt.Errorf("topology: gso_max_segs %d on %s: %w", segs, d.name, err)
	}
	if size > 0 {
		if err := d.h.LinkSetGSOMaxSize(l, size); err != nil {
			return fmt.Errorf("topology: gso_max_size %d on %s: %w", size, d.name, err)
		}
	}
	if err := d.Do(func() error {
		if minTSOSegs != "" {
			if err := os.WriteFile(minTSOSegsPath, []byte(minTSOSegs), 0o644); err != nil {
				return fmt.Errorf("tcp_min_tso_segs %s: %w", minTSOSegs, err)
			}
		}
		set := []struct {
			o  ethtool.Offload
			on bool
		}{{ethtool.TSO, tso}, {ethtool.GSO, gso}}
		if gro != nil {
			set = append(set, struct {
				o  ethtool.Offload
				on bool
			}{ethtool.GRO, *gro})
		}
		for _, o := range set {
			if err := ethtool.Set(d.name, o.o, o.on); err != nil {
				// A device whose offload is fixed refuses to set it even
				// to the value it has.
				if cur, gerr := ethtool.Get(d.name, o.o); gerr != nil || cur != o.on {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("topology: %w", err)
	}
	return nil
}

// Prepare applies a cell's MTU and segmentation offload, and returns the
// device's resulting state and what GSO on or off meant, for the record.
func (d *Device) Prepare(mtu int, gso bool) (offloads, gsoNote string, err error) {
	if err := d.SetMTU(mtu); err != nil {
		return "", "", err
	}
	if err := d.SetGSO(gso); err != nil {
		return "", "", err
	}
	offloads, err = d.Offloads()
	note := GSONote(gso)
	if d.isVeth() {
		note = VethGSONote(gso)
	}
	return offloads, note, err
}

// Offloads reports the device's offloads and MTU, for the record.
func (d *Device) Offloads() (string, error) {
	var parts []string
	err := d.Do(func() error {
		for _, o := range []ethtool.Offload{ethtool.TSO, ethtool.GSO, ethtool.GRO} {
			on, err := ethtool.Get(d.name, o)
			if err != nil {
				return err
			}
			parts = append(parts, fmt.Sprintf("%s=%v", o.Name, on))
		}
		return nil
	})
	if u := d.udpSegmentation(); u != "" {
		parts = append(parts, u)
	}
	l, lerr := d.h.LinkByName(d.name)
	if lerr == nil {
		parts = append(parts, fmt.Sprintf("mtu=%d gso_max_segs=%d gso_max_size=%d", l.Attrs().MTU, l.Attrs().GSOMaxSegs, l.Attrs().GSOMaxSize))
	}
	return strings.Join(parts, " "), err
}

// Driver names the device's driver (from sysfs; for a device without one,
// its kind, such as veth), for the record.
func (d *Device) Driver() string {
	var name string
	d.Do(func() error {
		if p, err := os.Readlink("/sys/class/net/" + d.name + "/device/driver"); err == nil {
			name = filepath.Base(p)
		}
		return nil
	})
	if name != "" {
		return name
	}
	if l, err := d.link(); err == nil {
		return l.Type()
	}
	return ""
}

// Addrs lists the device's IP addresses.
func (d *Device) Addrs() ([]netip.Addr, error) {
	l, err := d.link()
	if err != nil {
		return nil, err
	}
	as, err := d.h.AddrList(l, netlink.FAMILY_ALL)
	if err != nil {
		return nil, fmt.Errorf("topology: addresses of %s: %w", d.name, err)
	}
	var out []netip.Addr
	for _, a := range as {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			out = append(out, ip.Unmap())
		}
	}
	return out, nil
}

// RouteDevice names the device that traffic to dst leaves through, seen
// from the device's namespace.
func (d *Device) RouteDevice(dst netip.Addr) (string, error) {
	rs, err := d.h.RouteGet(dst.AsSlice())
	if err != nil || len(rs) == 0 {
		return "", fmt.Errorf("topology: no route to %v: %v", dst, err)
	}
	l, err := d.h.LinkByIndex(rs[0].LinkIndex)
	if err != nil {
		return "", fmt.Errorf("topology: route to %v: %w", dst, err)
	}
	return l.Attrs().Name, nil
}

// Restore puts back the MTU and offloads the device had when OpenDevice
// opened it (nothing for the veth ends, which go away with the topology).
func (d *Device) Restore() error {
	if d.saved == nil {
		return nil
	}
	var errs []error
	if err := d.SetMTU(d.saved.mtu); err != nil {
		errs = append(errs, err)
	}
	if err := d.setOffloads(d.saved.segs, d.saved.size, d.saved.minTSOSegs, d.saved.tso, d.saved.gso, &d.saved.gro); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("restore %s: %w", d.name, err)
	}
	return nil
}

// Close restores the device and releases its netlink handle.
func (d *Device) Close() error {
	err := d.Restore()
	if d.own {
		d.h.Close()
	}
	return err
}

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
