// Package topo builds the single-host benchmark topology: two network
// namespaces joined by a veth pair, with the MTU and segmentation offloads
// set per benchmark cell, and removes it afterwards.
package topo

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/vishvananda/netlink"

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
	for _, e := range []struct {
		h   *netlink.Handle
		dev string
	}{{t.hc, clientDev}, {t.hs, serverDev}} {
		l, err := e.h.LinkByName(e.dev)
		if err != nil {
			return err
		}
		if err := e.h.LinkSetMTU(l, mtu); err != nil {
			return fmt.Errorf("topology: MTU %d on %s: %w (the device refuses it)", mtu, e.dev, err)
		}
	}
	return nil
}

// SetGSO turns segmentation offload on or off on both ends, and says what it
// did. Off means more than the device features: Linux hands TCP's
// super-packets to a device without TSO/GSO and segments them in software
// at the last moment, so the stack still moves 64 KiB packets. Limiting the
// device to one segment per packet (gso_max_segs 1) makes TCP build
// MSS-sized packets from the start, as a kernel without GSO would.
func (t *Topology) SetGSO(on bool) (string, error) {
	segs := 65535
	if !on {
		segs = 1
	}
	for _, e := range []struct {
		h   *netlink.Handle
		ns  *netns.NS
		dev string
	}{{t.hc, t.Client, clientDev}, {t.hs, t.Server, serverDev}} {
		l, err := e.h.LinkByName(e.dev)
		if err != nil {
			return "", err
		}
		if err := e.h.LinkSetGSOMaxSegs(l, segs); err != nil {
			return "", fmt.Errorf("topology: gso_max_segs %d on %s: %w", segs, e.dev, err)
		}
		if err := e.ns.Do(func() error {
			for _, o := range []ethtool.Offload{ethtool.TSO, ethtool.GSO} {
				if err := ethtool.Set(e.dev, o, on); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return "", fmt.Errorf("topology: %w", err)
		}
	}
	if on {
		return "tso and gso on, gso_max_segs 65535", nil
	}
	return "tso and gso off, gso_max_segs 1 (no super-packets in the stack)", nil
}

// Offloads reports the offload state of the client's device, for the record.
func (t *Topology) Offloads() (string, error) {
	var parts []string
	err := t.Client.Do(func() error {
		for _, o := range []ethtool.Offload{ethtool.TSO, ethtool.GSO, ethtool.GRO} {
			on, err := ethtool.Get(clientDev, o)
			if err != nil {
				return err
			}
			parts = append(parts, fmt.Sprintf("%s=%v", o.Name, on))
		}
		return nil
	})
	l, lerr := t.hc.LinkByName(clientDev)
	if lerr == nil {
		parts = append(parts, fmt.Sprintf("mtu=%d gso_max_segs=%d gso_max_size=%d", l.Attrs().MTU, l.Attrs().GSOMaxSegs, l.Attrs().GSOMaxSize))
	}
	return strings.Join(parts, " "), err
}

// Devices names the veth ends (client, server), for captures and counters.
func Devices() (client, server string) { return clientDev, serverDev }
