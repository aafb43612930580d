//go:build linux

package counters

import (
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/bench/topo"
	"kquic.dev/internal/ethtool"
)

// newTopo builds the benchmark's veth topology or skips without root.
func newTopo(t *testing.T, gso bool) *topo.Topology {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces, eBPF)")
	}
	tp, err := topo.New()
	if err != nil {
		t.Fatalf("topology: %v", err)
	}
	t.Cleanup(func() { tp.Close() })
	if _, err := tp.SetGSO(gso); err != nil {
		t.Fatalf("set gso %v: %v", gso, err)
	}
	return tp
}

func ends(tp *topo.Topology) []End {
	c, s := topo.Devices()
	return []End{{Name: "client", Ifname: c, Do: tp.Client.Do}, {Name: "server", Ifname: s, Do: tp.Server.Do}}
}

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// udpPair opens a UDP socket in the server namespace bound to port and one
// in the client namespace (Topology.UDPSockets).
func udpPair(t *testing.T, tp *topo.Topology, port int) (cfd, sfd int) {
	t.Helper()
	cfd, sfd, err := tp.UDPSockets(port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(cfd); unix.Close(sfd) })
	return cfd, sfd
}

var serverTo = func(port int) unix.Sockaddr {
	return &unix.SockaddrInet4{Port: port, Addr: topo.ServerAddr.As4()}
}

// sendN sends n datagrams of size bytes with one sendmsg each from a thread
// in the client namespace (oob carries a UDP_SEGMENT cmsg when gsoSize>0).
func sendN(t *testing.T, tp *topo.Topology, fd, port, n, size, gsoSize int) {
	t.Helper()
	buf := make([]byte, size)
	err := tp.Client.Do(func() error {
		var cm []byte
		if gsoSize > 0 {
			cm = udpSegmentCmsg(uint16(gsoSize))
		}
		for i := 0; i < n; i++ {
			if _, err := unix.SendmsgN(fd, buf, cm, serverTo(port), 0); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("sendmsg: %v", err)
	}
}

// udpSegmentCmsg is a SOL_UDP/UDP_SEGMENT control message: the kernel
// splits the datagram into segments of size bytes (UDP GSO).
func udpSegmentCmsg(size uint16) []byte {
	b := make([]byte, unix.CmsgSpace(2))
	h := (*unix.Cmsghdr)(unsafePointer(&b[0]))
	h.Level = unix.SOL_UDP
	h.Type = unix.UDP_SEGMENT
	h.SetLen(unix.CmsgLen(2))
	b[unix.CmsgLen(0)] = byte(size)
	b[unix.CmsgLen(0)+1] = byte(size >> 8)
	return b
}

func startSet(t *testing.T, tp *topo.Topology) *Set {
	t.Helper()
	s, err := Start(Options{Ends: ends(tp), PID: os.Getpid()})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	for k, v := range s.missing {
		if k == "tx" || k == "rx" || k == "syscalls" {
			s.Stop()
			t.Fatalf("counter %s missing: %s", k, v)
		}
	}
	return s
}

func bucketOf(size int) int {
	for i, b := range SizeBounds {
		if uint32(size) <= b {
			return i
		}
	}
	return len(SizeBounds)
}

// TestUDPNoGSO: N datagrams with GSO off are N packets on the device, N
// packets received on the peer, and about N sendmsg calls.
func TestUDPNoGSO(t *testing.T) {
	tp := newTopo(t, false)
	const port, n, size = 4433, 300, 1000
	cfd, sfd := udpPair(t, tp, port)
	sendN(t, tp, cfd, port, 1, size, 0) // resolve ARP before counting
	receiveOne(t, tp, sfd)
	fds := countFDs(t)
	s := startSet(t, tp)
	sendN(t, tp, cfd, port, n, size, 0)
	drain(t, tp, sfd)
	r, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if got := countFDs(t); got != fds {
		t.Errorf("fds: %d before Start, %d after Stop (leaked BPF objects?)", fds, got)
	}
	c, sv := r.Ends[0], r.Ends[1]
	t.Logf("client: tx %d pkts %d bytes sizes %v syscalls %v", c.TxPackets, c.TxBytes, c.TxSizes, c.Syscalls)
	t.Logf("server: rx %d pkts, drops %v, proc Udp.InDatagrams %d", sv.RxPackets, sv.Drops, sv.Proc["Udp.InDatagrams"])
	t.Logf("missing: %v", r.MissingList())
	wire := size + 8 + 20 + 14
	if got := c.TxSizes[bucketOf(wire)]; got != n {
		t.Errorf("client net_dev_start_xmit packets of %d bytes: %d, want %d", wire, got, n)
	}
	if c.TxPackets < n || c.TxPackets > n+10 {
		t.Errorf("client tx packets %d, want %d (+ a few ARP/IPv6)", c.TxPackets, n)
	}
	if sv.RxPackets < n || sv.RxPackets > n+10 {
		t.Errorf("server rx packets %d, want %d", sv.RxPackets, n)
	}
	if got := c.Syscalls["sendmsg"]; got < n || got > n+5 {
		t.Errorf("client sendmsg calls %d, want %d", got, n)
	}
	if got := sv.Syscalls["sendmsg"]; got != 0 {
		t.Errorf("server namespace sendmsg calls %d, want 0", got)
	}
	// Each sendmsg returned size bytes; the drain's recvfrom calls returned
	// the n datagrams and then EAGAIN, which returns no bytes.
	if got := c.SyscallBytes["sendmsg"]; got < n*size {
		t.Errorf("client sendmsg returned %d bytes in %d calls, want %d in %d", got, c.Syscalls["sendmsg"], n*size, n)
	}
	if got := sv.SyscallBytes["recvfrom"]; got != n*size || sv.Syscalls["recvfrom"] < n+1 {
		t.Errorf("server recvfrom returned %d bytes in %d calls, want %d in at least %d (the last one EAGAIN)", got, sv.Syscalls["recvfrom"], n*size, n+1)
	}
	if got := sv.Proc["Udp.InDatagrams"]; got != n {
		t.Errorf("server Udp.InDatagrams delta %d, want %d", got, n)
	}
	if got := c.Proc["Udp.OutDatagrams"]; got != n {
		t.Errorf("client Udp.OutDatagrams delta %d, want %d", got, n)
	}
	flat := r.Flat()
	if flat["client.syscall.sendmsg"] != float64(c.Syscalls["sendmsg"]) {
		t.Errorf("Flat client.syscall.sendmsg = %v", flat["client.syscall.sendmsg"])
	}
	if flat["server.syscall_bytes.recvfrom"] != float64(n*size) {
		t.Errorf("Flat server.syscall_bytes.recvfrom = %v, want %d", flat["server.syscall_bytes.recvfrom"], n*size)
	}
	if _, has := flat["server.syscall_bytes.epoll_pwait"]; has {
		t.Errorf("Flat has bytes of epoll_pwait, whose return is not a byte count")
	}
	pm := PerMB(r, int64(n*size))
	if want := float64(c.TxPackets) / (float64(n*size) / 1e6); pm["client.tx_packets"] != want {
		t.Errorf("PerMB tx_packets %v, want %v", pm["client.tx_packets"], want)
	}
}

// TestUDPGSO: with UDP_SEGMENT a device with tx-udp-segmentation off
// segments each sendmsg's datagrams, so it sends one packet per segment;
// a device that takes UDP super-packets whole (tx-udp-segmentation on,
// veth's default and a NIC with UDP segmentation offload) sends one
// super-packet per sendmsg. The counters tell the two apart, and the
// receiving socket reads every datagram either way.
func TestUDPGSO(t *testing.T) {
	tp := newTopo(t, true)
	const port, calls, segs, seg = 4434, 50, 10, 1000
	cfd, sfd := udpPair(t, tp, port)
	sendN(t, tp, cfd, port, 1, seg, 0)
	drain(t, tp, sfd)
	for _, whole := range []bool{false, true} {
		deviceTakesUDPGSO(t, tp, whole)
		fds := countFDs(t)
		s := startSet(t, tp)
		sendN(t, tp, cfd, port, calls, segs*seg, seg)
		drain(t, tp, sfd)
		r, err := s.Stop()
		if err != nil {
			t.Fatal(err)
		}
		if got := countFDs(t); got != fds {
			t.Errorf("fds: %d before Start, %d after Stop", fds, got)
		}
		c, sv := r.Ends[0], r.Ends[1]
		t.Logf("whole %v: client: tx %d pkts sizes %v segments %v; server rx %d, Udp.InDatagrams %d", whole, c.TxPackets, c.TxSizes, c.TxSegs, sv.RxPackets, sv.Proc["Udp.InDatagrams"])
		if whole {
			super := 14 + 20 + 8*segs + segs*seg // IP header once, a UDP header per segment
			if got := c.TxSizes[bucketOf(super)]; got != calls {
				t.Errorf("client super-packets (~%d bytes): %d, want %d (n/segments)", super, got, calls)
			}
		} else if got := c.TxSegs[0]; got < calls*segs || got > calls*segs+5 || c.TxPackets > calls*segs+5 {
			t.Errorf("client packets %d, %d of one segment: want %d (segmented at the device; + a few ARP/IPv6)", c.TxPackets, got, calls*segs)
		}
		if got := sv.Proc["Udp.InDatagrams"]; got != calls*segs {
			t.Errorf("server Udp.InDatagrams %d, want %d", got, calls*segs)
		}
		if got := c.Syscalls["sendmsg"]; got < calls || got > calls+5 {
			t.Errorf("client sendmsg calls %d, want %d", got, calls)
		}
	}
}

// deviceTakesUDPGSO turns the client device's UDP segmentation offload on
// (whole), so that UDP super-packets reach the device whole, as on a NIC
// that segments UDP in hardware, or off, so that the stack segments them
// before the device.
func deviceTakesUDPGSO(t *testing.T, tp *topo.Topology, whole bool) {
	t.Helper()
	c, _ := topo.Devices()
	if err := tp.Client.Do(func() error { return ethtool.SetFeature(c, "tx-udp-segmentation", whole) }); err != nil {
		t.Fatal(err)
	}
}

// TestNoBPF: without eBPF the result says so and still has /proc deltas.
func TestNoBPF(t *testing.T) {
	tp := newTopo(t, false)
	s, err := Start(Options{Ends: ends(tp), NoBPF: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if r.Missing["tx"] == "" || r.Missing["syscalls"] == "" {
		t.Errorf("missing = %v, want tx and syscalls", r.Missing)
	}
	if _, ok := r.Flat()["client.proc.Udp.RcvbufErrors"]; !ok {
		t.Errorf("no client.proc.Udp.RcvbufErrors in %v", r.Flat())
	}
}

// drain reads every queued datagram (UDP counts InDatagrams on receipt by
// the application) from a thread in the server namespace.
// receiveOne waits for one datagram on fd and reads it. The datagram that
// resolves ARP is held until the reply comes: a non-blocking drain could
// run before it arrived and leave it to be read (and counted by
// Udp.InDatagrams, which the kernel bumps on reading) inside the window.
func receiveOne(t *testing.T, tp *topo.Topology, fd int) {
	t.Helper()
	buf := make([]byte, 65536)
	err := tp.Server.Do(func() error {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(pfd, 10000)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("no datagram within 10 s")
			}
			_, _, err = unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
			return err
		}
	})
	if err != nil {
		t.Fatalf("the first datagram (resolving ARP): %v", err)
	}
}

func drain(t *testing.T, tp *topo.Topology, fd int) {
	t.Helper()
	buf := make([]byte, 65536)
	tp.Server.Do(func() error {
		for {
			if _, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT); err != nil {
				return nil
			}
		}
	})
}

// TestWindowAhead: instants given ahead, as the runner gives them, count
// what happens between the instants, not between the calls - the eBPF
// counters by the kernel's clock, the /proc/net counters read when each
// instant comes.
func TestWindowAhead(t *testing.T) {
	tp := newTopo(t, false)
	const port, before, in, after, size = 4437, 60, 90, 40, 1000
	cfd, sfd := udpPair(t, tp, port)
	sendN(t, tp, cfd, port, 1, size, 0) // resolve ARP before counting
	receiveOne(t, tp, sfd)
	// The instants lie ahead by several times what a burst takes here
	// (an emulated CPU sends 90 datagrams in over a second).
	t0 := time.Now()
	sendN(t, tp, cfd, port, in, size, 0)
	drain(t, tp, sfd)
	lead := max(time.Second, 5*time.Since(t0))
	s := startSet(t, tp)
	open := time.Now().Add(lead)
	s.Begin(open)
	sendN(t, tp, cfd, port, before, size, 0) // after Begin, before its instant
	drain(t, tp, sfd)
	if time.Now().After(open) {
		t.Fatalf("sending %d datagrams took longer than %v: cannot test an instant ahead", before, lead)
	}
	time.Sleep(time.Until(open) + lead/2) // the timer reading /proc may run late on a loaded machine
	sendN(t, tp, cfd, port, in, size, 0)
	drain(t, tp, sfd)
	shut := time.Now().Add(lead)
	s.End(shut)
	sendN(t, tp, cfd, port, in, size, 0) // after End, before its instant: still in
	drain(t, tp, sfd)
	if time.Now().After(shut) {
		t.Fatalf("sending %d datagrams took longer than %v: cannot test an instant ahead", in, lead)
	}
	time.Sleep(time.Until(shut) + lead/2)
	sendN(t, tp, cfd, port, after, size, 0)
	drain(t, tp, sfd)
	r, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	c, sv := r.Ends[0], r.Ends[1]
	wire := size + 8 + 20 + 14
	if got := c.TxSizes[bucketOf(wire)]; got != 2*in {
		t.Errorf("client packets of %d bytes between the instants: %d, want %d", wire, got, 2*in)
	}
	if got := c.Proc["Udp.OutDatagrams"]; got != 2*in {
		t.Errorf("client Udp.OutDatagrams between the instants: %d, want %d (read at the calls, not the instants?)", got, 2*in)
	}
	if got := sv.Proc["Udp.InDatagrams"]; got != 2*in {
		t.Errorf("server Udp.InDatagrams between the instants: %d, want %d", got, 2*in)
	}
	if m, ok := r.Missing["window"]; ok {
		t.Errorf("instants set ahead reported late: %s", m)
	}
}

// TestWindow: with Begin and End, only what happens between them counts,
// by the kernel's clock, however late Stop reads the maps.
func TestWindow(t *testing.T) {
	tp := newTopo(t, false)
	const port, before, in, after, size = 4436, 100, 200, 50, 1000
	cfd, sfd := udpPair(t, tp, port)
	sendN(t, tp, cfd, port, 1, size, 0) // resolve ARP before counting
	receiveOne(t, tp, sfd)
	fds := countFDs(t)
	s := startSet(t, tp)
	sendN(t, tp, cfd, port, before, size, 0)
	drain(t, tp, sfd)
	s.Begin(time.Now())
	sendN(t, tp, cfd, port, in, size, 0)
	drain(t, tp, sfd)
	s.End(time.Now())
	sendN(t, tp, cfd, port, after, size, 0)
	drain(t, tp, sfd)
	r, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if got := countFDs(t); got != fds {
		t.Errorf("fds: %d before Start, %d after Stop (leaked BPF objects or /proc files?)", fds, got)
	}
	c, sv := r.Ends[0], r.Ends[1]
	t.Logf("client: tx %d sizes %v sendmsg %d; server rx %d; proc out %d in %d", c.TxPackets, c.TxSizes, c.Syscalls["sendmsg"], sv.RxPackets, c.Proc["Udp.OutDatagrams"], sv.Proc["Udp.InDatagrams"])
	wire := size + 8 + 20 + 14
	if got := c.TxSizes[bucketOf(wire)]; got != in {
		t.Errorf("client packets of %d bytes in the window: %d, want %d (not the %d before or %d after)", wire, got, in, before, after)
	}
	if got := sv.RxPackets; got < in || got > in+5 {
		t.Errorf("server rx packets in the window %d, want %d", got, in)
	}
	if got := c.Syscalls["sendmsg"]; got != in {
		t.Errorf("client sendmsg calls in the window %d, want %d", got, in)
	}
	if got := c.Proc["Udp.OutDatagrams"]; got != in {
		t.Errorf("client Udp.OutDatagrams in the window %d, want %d", got, in)
	}
	if got := sv.Proc["Udp.InDatagrams"]; got != in {
		t.Errorf("server Udp.InDatagrams in the window %d, want %d", got, in)
	}
	// Begin and End again change nothing; Stop twice is an error.
	s.Begin(time.Now())
	s.End(time.Now())
	if _, err := s.Stop(); err == nil {
		t.Error("second Stop: no error")
	}
}
