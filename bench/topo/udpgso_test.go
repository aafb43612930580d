//go:build linux

package topo_test

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"kquic.dev/bench/counters"
	"kquic.dev/bench/topo"
	"kquic.dev/internal/ethtool"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// TestVethSegmentsUDPGSO: over the veth pair, with GSO on as with GSO off,
// a UDP GSO send of 4 segments leaves the client's device as 4 datagrams
// and enters the server's stack as 4 (counted by eBPF at the devices, and
// by the server's UDP counter), as from a NIC; not as one 4-segment
// super-packet, which veth with tx-udp-segmentation on passes whole.
func TestVethSegmentsUDPGSO(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth, kmod.FeatureUDPGSO)
	tp, err := topo.New()
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Close()
	for _, gso := range []bool{true, false} {
		note, err := tp.SetGSO(gso)
		if err != nil {
			t.Fatal(err)
		}
		offl, _ := tp.Offloads()
		t.Logf("gso %v: %s; %s", gso, note, offl)
		cdev, _ := topo.Devices()
		tp.Client.Do(func() error {
			if on, _, err := ethtool.Feature(cdev, "tx-udp-segmentation"); err != nil || on {
				t.Errorf("gso %v: client tx-udp-segmentation on %v (%v), want off", gso, on, err)
			}
			return nil
		})
		const calls, segs, seg = 20, 4, 1000
		cfd, sfd := udpPair(t, tp, 4450)
		send(t, tp, cfd, 4450, 1, seg, 0) // ARP first
		recvAll(t, tp, sfd, 1)
		c, s := topo.Devices()
		set, err := counters.Start(counters.Options{Ends: []counters.End{
			{Name: "client", Ifname: c, Do: tp.Client.Do}, {Name: "server", Ifname: s, Do: tp.Server.Do}}})
		if err != nil {
			t.Fatal(err)
		}
		send(t, tp, cfd, 4450, calls, segs*seg, seg)
		n := recvAll(t, tp, sfd, calls*segs)
		r, err := set.Stop()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"tx", "rx"} {
			if why, ok := r.Missing[k]; ok {
				t.Fatalf("counter %s missing: %s", k, why)
			}
		}
		cl, sv := r.Ends[0], r.Ends[1]
		t.Logf("gso %v: client tx %d packets, segments %v; server rx %d packets; %d datagrams read", gso, cl.TxPackets, cl.TxSegs, sv.RxPackets, n)
		if n != calls*segs {
			t.Errorf("gso %v: %d datagrams read, want %d", gso, n, calls*segs)
		}
		if cl.TxSegs[0] < calls*segs || cl.TxSegs[0] > calls*segs+5 || cl.TxPackets > calls*segs+5 {
			t.Errorf("gso %v: the client's device took %d packets, %d of one segment: want %d single datagrams (the super-packets segmented at the device)", gso, cl.TxPackets, cl.TxSegs[0], calls*segs)
		}
		if sv.RxPackets < calls*segs || sv.RxPackets > calls*segs+5 {
			t.Errorf("gso %v: the server's stack took in %d packets, want %d", gso, sv.RxPackets, calls*segs)
		}
		unix.Close(cfd)
		unix.Close(sfd)
	}
}

func udpPair(t *testing.T, tp *topo.Topology, port int) (cfd, sfd int) {
	t.Helper()
	cfd, sfd, err := tp.UDPSockets(port)
	if err != nil {
		t.Fatal(err)
	}
	return cfd, sfd
}

// send makes n sendmsg calls of size bytes, cut into segments of gsoSize
// by the kernel (UDP_SEGMENT) when gsoSize > 0.
func send(t *testing.T, tp *topo.Topology, fd, port, n, size, gsoSize int) {
	t.Helper()
	var cm []byte
	if gsoSize > 0 {
		cm = make([]byte, unix.CmsgSpace(2))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&cm[0]))
		h.Level, h.Type = unix.SOL_UDP, unix.UDP_SEGMENT
		h.SetLen(unix.CmsgLen(2))
		*(*uint16)(unsafe.Pointer(&cm[unix.CmsgLen(0)])) = uint16(gsoSize)
	}
	buf := make([]byte, size)
	err := tp.Client.Do(func() error {
		for range n {
			if _, err := unix.SendmsgN(fd, buf, cm, &unix.SockaddrInet4{Port: port, Addr: topo.ServerAddr.As4()}, 0); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("sendmsg: %v", err)
	}
}

// recvAll reads datagrams until want have come or none comes for a
// second, and returns how many it read.
func recvAll(t *testing.T, tp *topo.Topology, fd, want int) int {
	t.Helper()
	buf := make([]byte, 65536)
	got := 0
	err := tp.Server.Do(func() error {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for got < want {
			n, err := unix.Poll(pfd, 1000)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return err
			}
			if n == 0 {
				return nil
			}
			if _, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT); err == nil {
				got++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("recv: %v", err)
	}
	return got
}
