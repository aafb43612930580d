//go:build linux

package vm

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/ethtool"
)

// setupNIC configures the guest's end of a pair's link: the device the host
// gave the MAC address of gets its MTU, address and offloads, and comes up;
// the peer's name goes into /etc/hosts (the guest's overlay). It returns the
// device as the guest then sees it.
func setupNIC(n *nicSpec) (*NIC, error) {
	dev, err := devByMAC(n.MAC)
	if err != nil {
		return nil, err
	}
	pfx, err := netip.ParsePrefix(n.Addr)
	if err != nil || !pfx.Addr().Is4() {
		return nil, fmt.Errorf("address %q is not an IPv4 prefix", n.Addr)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	ifreq := func(what string, req uint, set func(*unix.Ifreq) error) error {
		ifr, err := unix.NewIfreq(dev)
		if err != nil {
			return err
		}
		if set != nil {
			if err := set(ifr); err != nil {
				return fmt.Errorf("%s of %s: %w", what, dev, err)
			}
		}
		if err := unix.IoctlIfreq(fd, req, ifr); err != nil {
			return fmt.Errorf("%s of %s: %w", what, dev, err)
		}
		return nil
	}
	if n.MTU != 0 {
		if err := ifreq(fmt.Sprintf("set MTU %d", n.MTU), unix.SIOCSIFMTU, func(r *unix.Ifreq) error { r.SetUint32(uint32(n.MTU)); return nil }); err != nil {
			return nil, err
		}
	}
	ip := pfx.Addr().As4()
	mask := net.CIDRMask(pfx.Bits(), 32)
	if err := ifreq("set address "+n.Addr, unix.SIOCSIFADDR, func(r *unix.Ifreq) error { return r.SetInet4Addr(ip[:]) }); err != nil {
		return nil, err
	}
	if err := ifreq("set netmask "+n.Addr, unix.SIOCSIFNETMASK, func(r *unix.Ifreq) error { return r.SetInet4Addr(mask) }); err != nil {
		return nil, err
	}
	for name, on := range n.Offloads {
		o, ok := ethtool.OffloadByName(name)
		if !ok {
			// A feature by its ethtool -k name (rx-gro-hw); one the device
			// has fixed at the value asked for is fine (the socket link
			// has no receive offload to switch off).
			if err := ethtool.SetFeature(dev, name, on); err != nil {
				if active, _, ferr := ethtool.Feature(dev, name); ferr != nil || active != on {
					return nil, err
				}
			}
			continue
		}
		if err := ethtool.Set(dev, o, on); err != nil {
			return nil, err
		}
	}
	ifr, err := unix.NewIfreq(dev)
	if err != nil {
		return nil, err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return nil, fmt.Errorf("get flags of %s: %w", dev, err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return nil, fmt.Errorf("set %s up: %w", dev, err)
	}
	if n.PeerName == "" {
		return describeNIC(dev, n)
	}
	if f, err := os.OpenFile("/etc/hosts", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
		fmt.Fprintf(f, "%s\t%s\n", n.Peer, n.PeerName)
		f.Close()
	}
	return describeNIC(dev, n)
}

// devByMAC finds the interface with the hardware address mac.
func devByMAC(mac string) (string, error) {
	addrs, _ := filepath.Glob("/sys/class/net/*/address")
	for _, p := range addrs {
		b, err := os.ReadFile(p)
		if err == nil && strings.EqualFold(strings.TrimSpace(string(b)), mac) {
			return filepath.Base(filepath.Dir(p)), nil
		}
	}
	return "", fmt.Errorf("no network device has the link's address %s (is virtio_net loaded?)", mac)
}

// describeNIC reads back what the guest has: driver, MTU, queues, offloads.
func describeNIC(dev string, n *nicSpec) (*NIC, error) {
	nic := &NIC{Dev: dev, MAC: n.MAC, Addr: n.Addr, Peer: n.Peer, Offloads: map[string]bool{}}
	var err error
	if nic.Driver, err = ethtool.GetDriverInfo(dev); err != nil {
		return nil, err
	}
	ifi, err := net.InterfaceByName(dev)
	if err != nil {
		return nil, err
	}
	nic.MTU = ifi.MTU
	if ch, err := ethtool.GetChannels(dev); err == nil {
		nic.Queues, nic.MaxQueues = ch.Combined, ch.MaxComb
	}
	for _, o := range ethtool.Offloads {
		if on, err := ethtool.Get(dev, o); err == nil {
			nic.Offloads[o.Name] = on
		}
	}
	for _, name := range featureNames {
		if on, _, err := ethtool.Feature(dev, name); err == nil {
			nic.Offloads[name] = on
		}
	}
	return nic, nil
}
