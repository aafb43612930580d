//go:build linux

package topo

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/vishvananda/netlink"

	"kquic.dev/internal/ethtool"
	"kquic.dev/internal/netns"
)

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

// Offloads reports the device's offloads, MTU and size limits, and its
// namespace's tcp_min_tso_segs, for the record.
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
		if b, err := os.ReadFile(minTSOSegsPath); err == nil {
			parts = append(parts, "tcp_min_tso_segs="+strings.TrimSpace(string(b)))
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
