//go:build linux

package counters

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"kquic.dev/kmod/knownbugs"
	"net/netip"
	"os"
	"testing"
	"time"

	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// TestKernelQUICDropSites: the drops counted while kernel QUIC moves a
// stream between the namespaces are each named by the function that freed
// the packet, module functions included, so a reader can tell a loss from
// a packet freed with kfree_skb after use (the module's quic_frame_put
// frees every received packet that way once recvmsg has copied it).
func TestKernelQUICDropSites(t *testing.T) {
	tr, err := transport.Get("kquic")
	if err != nil {
		t.Fatal(err)
	}
	testenv.Require(t, kmod.FeatureQUIC)
	if err := tr.Available(); err != nil {
		t.Fatalf("kernel QUIC: %v", err)
	}
	tp := newTopo(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := transport.Options{Crypto: true, GSO: true}
	var ln transport.Listener
	if err := tp.Server.Do(func() (err error) {
		ln, err = tr.Listen(ctx, netip.AddrPortFrom(topo.ServerAddr, 0), o)
		return err
	}); err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	const total = 1 << 20
	got := make(chan int64, 1)
	go func() {
		s, err := ln.Accept(ctx)
		if err != nil {
			got <- -1
			return
		}
		defer s.Close()
		n, _ := io.Copy(io.Discard, s)
		got <- n
	}()
	var d transport.Dialer
	var s io.ReadWriteCloser
	if err := tp.Client.Do(func() (err error) {
		if d, err = tr.Dial(ctx, ln.Addr(), o); err != nil {
			return err
		}
		s, err = d.Open(ctx)
		return err
	}); err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer d.Close()
	set, err := Start(Options{Ends: ends(tp), PID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	if why, ok := set.missing["drops"]; ok {
		set.Stop()
		t.Fatalf("drops not counted: %s", why)
	}
	if _, err := s.Write(bytes.Repeat([]byte("x"), total)); err != nil {
		t.Fatalf("write: %v", err)
	}
	s.Close()
	if n := <-got; n != total {
		t.Fatalf("server read %d bytes, want %d", n, total)
	}
	r, err := set.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if why, ok := r.Missing["drops.where"]; ok {
		t.Fatalf("drop locations not named: %s", why)
	}
	sv := r.Ends[1]
	t.Logf("server: %d packets in, drops %v", sv.RxPackets, sv.Drops)
	var inModule, framePut uint64
	for _, ds := range sv.DropSites {
		t.Logf("server drop: %d × %s at %s", ds.Count, ds.Reason, ds.Site)
		if ds.Site.Func == "" {
			t.Errorf("%d %s drops at %#x not named", ds.Count, ds.Reason, ds.Location)
		}
		if ds.Site.Module == "quic" {
			inModule += ds.Count
			if ds.Site.Func == "quic_frame_put" && ds.Reason == "NOT_SPECIFIED" {
				framePut += ds.Count
			}
		}
	}
	flat := r.Flat()
	for k, n := range sv.DropsAt {
		if flat["server.drop."+k] != float64(n) {
			t.Errorf("Flat server.drop.%s = %v, want %d", k, flat["server.drop."+k], n)
		}
	}
	// The bytes need at least total/1500 packets; the module frees each
	// one it took the data from with kfree_skb.
	minPackets := uint64(total / 1500)
	testenv.ModuleBug(t, bugFreedAsDropped, framePut >= minPackets/2,
		fmt.Sprintf("%d NOT_SPECIFIED drops at quic_frame_put for %d bytes read (%d packets in, %d drops in the module)", framePut, total, sv.RxPackets, inModule))
}

// bugFreedAsDropped is the module's way of freeing a received packet.
var bugFreedAsDropped = knownbugs.FreedAsDropped
