//go:build linux

package vm

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"kquic.dev/internal/ethtool"
	"kquic.dev/internal/netns"
)

// The link backends: how qemu carries the frames between the two guests'
// virtio-net devices.
const (
	// LinkSocket joins the two qemu processes by a Unix datagram socket pair
	// (qemu's dgram netdev), one frame per datagram. It needs no privilege,
	// but the frames carry no virtio-net header, so qemu offers the guests
	// no checksum offload, no scatter-gather and no TSO: the guests send
	// MTU-sized frames checksummed in software (GSO is off too, for lack
	// of scatter-gather; GRO works, in the receiving kernel), and the link
	// has one queue.
	LinkSocket = "socket"
	// LinkTap gives each guest a tap device with virtio-net headers, both
	// ports of a bridge in a network namespace of their own that the harness
	// creates (and removes with the pair). Frames keep their offload
	// metadata end to end, so the guests see what virtio-net implements:
	// TSO, GSO, GRO and checksum offload, and several queues (Link.Queues).
	// It needs root (CAP_NET_ADMIN, /dev/net/tun).
	LinkTap = "tap"
)

// DefaultLinkSubnet is the subnet of a pair's link: guest A is its first
// address (10.77.0.1), guest B its second.
var DefaultLinkSubnet = netip.MustParsePrefix("10.77.0.0/24")

// Link describes the link between the two guests of a pair.
type Link struct {
	// Backend is LinkSocket, LinkTap, or "" or "auto": LinkTap where this
	// process may create tap devices (root with /dev/net/tun), else
	// LinkSocket. [PairResult].Link says which ran.
	Backend string
	// MTU of both ends (default 1500).
	MTU int
	// Queues is the number of virtio-net queue pairs of each device
	// (default 1; LinkTap only, where the guest uses up to its vCPUs).
	Queues int
	// Subnet holds the two addresses (default DefaultLinkSubnet).
	Subnet netip.Prefix
	// Offloads are switched on both devices before the commands start,
	// by name as [NIC].Offloads reports them ("tso": false).
	Offloads map[string]bool
}

// LinkInfo is the link a pair ran with.
type LinkInfo struct {
	Backend string `json:"backend"`
	MTU     int    `json:"mtu"`
	Queues  int    `json:"queues"`
}

// nicPlan is one guest's end of a link: its qemu arguments and the files
// (sockets, tap queues) qemu inherits as fd 3 onwards.
type nicPlan struct {
	name  string
	spec  nicSpec
	qemu  []string
	files []*os.File
}

// link is a pair's link while it exists; close releases what it holds.
type link struct {
	info  LinkInfo
	ends  [2]*nicPlan
	close func()
}

// tapPossible reports whether this process may create tap devices.
func tapPossible() bool {
	if os.Geteuid() != 0 {
		return false
	}
	_, err := os.Stat("/dev/net/tun")
	return err == nil
}

// newLink creates the link's backend and both guests' ends of it.
func newLink(l Link) (*link, error) {
	if l.MTU == 0 {
		l.MTU = 1500
	}
	if l.MTU < 68 || l.MTU > 65535 {
		return nil, fmt.Errorf("vm: link MTU %d: use 68 to 65535", l.MTU)
	}
	if l.Queues == 0 {
		l.Queues = 1
	}
	if l.Queues < 1 || l.Queues > 16 {
		return nil, fmt.Errorf("vm: link queues %d: use 1 to 16", l.Queues)
	}
	if !l.Subnet.IsValid() {
		l.Subnet = DefaultLinkSubnet
	}
	if !l.Subnet.Addr().Is4() || l.Subnet.Bits() > 30 {
		return nil, fmt.Errorf("vm: link subnet %s: give an IPv4 prefix of /30 or wider", l.Subnet)
	}
	switch l.Backend {
	case "", "auto":
		l.Backend = LinkSocket
		if tapPossible() {
			l.Backend = LinkTap
		}
	case LinkSocket, LinkTap:
	default:
		return nil, fmt.Errorf("vm: link backend %q: use %s, %s or auto", l.Backend, LinkSocket, LinkTap)
	}
	if l.Backend == LinkSocket && l.Queues > 1 {
		return nil, fmt.Errorf("vm: link queues %d: the %s backend has one queue (use --link-backend %s for more)", l.Queues, LinkSocket, LinkTap)
	}
	if l.Backend == LinkTap && !tapPossible() {
		return nil, fmt.Errorf("vm: link backend %s needs root and /dev/net/tun (or use %s)", LinkTap, LinkSocket)
	}
	for name := range l.Offloads {
		if !knownOffload(name) {
			return nil, fmt.Errorf("vm: link offload %q: use %s", name, strings.Join(offloadNames(), ", "))
		}
	}
	base := l.Subnet.Masked().Addr()
	addrA, addrB := base.Next(), base.Next().Next()
	lk := &link{info: LinkInfo{Backend: l.Backend, MTU: l.MTU, Queues: l.Queues}, close: func() {}}
	for i, name := range []string{"A", "B"} {
		self, peer := addrA, addrB
		if i == 1 {
			self, peer = addrB, addrA
		}
		lk.ends[i] = &nicPlan{name: name, spec: nicSpec{
			MAC:      fmt.Sprintf("52:54:00:77:00:%02x", i+1),
			Addr:     netip.PrefixFrom(self, l.Subnet.Bits()).String(),
			Peer:     peer.String(),
			PeerName: "kqvm-" + strings.ToLower([]string{"B", "A"}[i]),
			MTU:      l.MTU,
			Offloads: l.Offloads,
		}}
	}
	var err error
	if l.Backend == LinkTap {
		err = lk.tap(l)
	} else {
		err = lk.socket()
	}
	if err != nil {
		return nil, err
	}
	return lk, nil
}

// device is the guest's virtio-net device on the netdev "kqnet".
func (e *nicPlan) device(queues int) string {
	d := "virtio-net-pci,netdev=kqnet,mac=" + e.spec.MAC
	if queues > 1 {
		// Two vectors per queue pair, one for control and one for config.
		d += ",mq=on,vectors=" + strconv.Itoa(2*queues+2)
	}
	return d
}

// socket joins the ends by a Unix datagram socket pair.
func (lk *link) socket() error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("vm: link socket pair: %w", err)
	}
	for i, e := range lk.ends {
		// Room for bursts of full-size frames; the kernel caps it at
		// net.core.wmem_max / rmem_max.
		unix.SetsockoptInt(fds[i], unix.SOL_SOCKET, unix.SO_SNDBUF, 4<<20)
		unix.SetsockoptInt(fds[i], unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20)
		e.files = []*os.File{os.NewFile(uintptr(fds[i]), "kqvm-link-"+e.name)}
		e.qemu = []string{"-netdev", "dgram,id=kqnet,local.type=fd,local.str=3", "-device", e.device(1)}
	}
	lk.close = func() {
		for _, e := range lk.ends {
			for _, f := range e.files {
				f.Close()
			}
		}
	}
	return nil
}

// tap gives each end a tap device with virtio-net headers, both on a bridge
// in a network namespace created for the link.
func (lk *link) tap(l Link) (err error) {
	ns, err := netns.New()
	if err != nil {
		return fmt.Errorf("vm: link: %w", err)
	}
	var taps [2]*netlink.Tuntap
	lk.close = func() {
		for _, t := range taps {
			if t != nil {
				for _, f := range t.Fds {
					f.Close()
				}
			}
		}
		ns.Close()
	}
	defer func() {
		if err != nil {
			lk.close()
		}
	}()
	err = ns.Do(func() error {
		br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "kqbr", MTU: l.MTU}}
		if err := netlink.LinkAdd(br); err != nil {
			return fmt.Errorf("add bridge: %w", err)
		}
		for i, e := range lk.ends {
			flags := netlink.TUNTAP_NO_PI | netlink.TUNTAP_VNET_HDR
			if l.Queues > 1 {
				flags |= netlink.TUNTAP_MULTI_QUEUE
			}
			t := &netlink.Tuntap{
				LinkAttrs:  netlink.LinkAttrs{Name: "kqtap-" + strings.ToLower(e.name), MTU: l.MTU},
				Mode:       netlink.TUNTAP_MODE_TAP,
				Flags:      flags,
				Queues:     l.Queues,
				NonPersist: true,
			}
			if err := netlink.LinkAdd(t); err != nil {
				return fmt.Errorf("add tap device %s: %w", t.Name, err)
			}
			taps[i] = t
			if err := netlink.LinkSetMTU(t, l.MTU); err != nil {
				return fmt.Errorf("set MTU of %s: %w", t.Name, err)
			}
			if err := netlink.LinkSetMaster(t, br); err != nil {
				return fmt.Errorf("put %s on the bridge: %w", t.Name, err)
			}
			if err := netlink.LinkSetUp(t); err != nil {
				return fmt.Errorf("set %s up: %w", t.Name, err)
			}
			var fds []string
			for q, f := range t.Fds {
				// The tap's queues are non-blocking for this process's
				// poller; qemu sets its own mode.
				e.files = append(e.files, f)
				fds = append(fds, strconv.Itoa(3+q))
			}
			nd := "tap,id=kqnet,vhost=off,fd=" + fds[0]
			if len(fds) > 1 {
				nd = "tap,id=kqnet,vhost=off,fds=" + strings.Join(fds, ":")
			}
			e.qemu = []string{"-netdev", nd, "-device", e.device(l.Queues)}
		}
		return netlink.LinkSetUp(br)
	})
	if err != nil {
		return fmt.Errorf("vm: link: %w", err)
	}
	return nil
}

func knownOffload(name string) bool {
	for _, n := range offloadNames() {
		if n == name {
			return true
		}
	}
	return false
}

// FeatureGROHW is virtio-net's receive offload of large packets, by its
// `ethtool -k` name: on (the default), a guest takes in the peer's TSO
// super-packets whole, as qemu hands them over with their virtio-net
// header, so no frame of the MTU ever exists between the two; off, the
// host kernel cuts them to MTU-sized frames at the receiving guest's tap
// (the "wire"), and the receiver's own GRO rebuilds them, as between two
// NICs. Link.Offloads switches it by this name.
const FeatureGROHW = "rx-gro-hw"

// featureNames are the ethtool features (not legacy offload switches) a
// link may switch.
var featureNames = []string{FeatureGROHW}

// ParseOffloads parses "tso=off,gro=on" into Link.Offloads.
func ParseOffloads(s []string) (map[string]bool, error) {
	if len(s) == 0 {
		return nil, nil
	}
	m := map[string]bool{}
	for _, kv := range s {
		k, v, ok := strings.Cut(kv, "=")
		on, valid := map[string]bool{"on": true, "off": false}[v]
		if !ok || !valid {
			return nil, fmt.Errorf("vm: offload %q: write name=on or name=off", kv)
		}
		if !knownOffload(k) {
			return nil, errors.New("vm: offload " + strconv.Quote(k) + ": use " + strings.Join(offloadNames(), ", "))
		}
		m[k] = on
	}
	return m, nil
}

// offloadNames are the offloads a link may switch.
func offloadNames() []string {
	var n []string
	for _, o := range ethtool.Offloads {
		n = append(n, o.Name)
	}
	return append(n, featureNames...)
}
