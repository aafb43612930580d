//go:build kquic && linux

package http3_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quic-go/quic-go"
	quichttp3 "github.com/quic-go/quic-go/http3"
	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"

	"kquic.dev/bench/topo"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

// requireImpl skips (or fails, where $KQUIC_REQUIRE lists quic) without the
// kernel QUIC module.
func requireImpl(t testing.TB) {
	t.Helper()
	testenv.Require(t, kmod.FeatureQUIC)
}

// startQuicGoServerFor starts quic-go's http3 server for this package's
// client over kernel QUIC: in a network namespace behind a veth pair with
// MTU 1400, since on loopback (MTU 65536) the kernel's first Initial is a
// 1624-byte datagram and quic-go reads at most 1452 bytes, so it never
// answers (kquic's TestInteropQuicGoServer does the same). The Transport
// dials from the client namespace.
func startQuicGoServerFor(t *testing.T, h http.Handler, opts ...func(*quichttp3.Server)) (string, *http3.Transport) {
	t.Helper()
	requireImpl(t)
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth)
	tp, err := topo.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tp.Close() })
	if err := tp.SetMTU(1400); err != nil {
		t.Fatal(err)
	}
	_, stls := tlsConfigs(t)
	var ln *quic.EarlyListener
	if err := tp.Server.Do(func() (err error) {
		ln, err = quic.ListenAddrEarly(netip.AddrPortFrom(topo.ServerAddr, 0).String(), quichttp3.ConfigureTLSConfig(stls), &quic.Config{Allow0RTT: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	srv := &quichttp3.Server{Handler: h}
	for _, o := range opts {
		o(srv)
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ln) }()
	t.Cleanup(func() {
		srv.Close()
		ln.Close()
		<-done
	})
	ctls, _ := tlsConfigs(t)
	ctls.ServerName = "server.test"
	tr := &http3.Transport{TLSClientConfig: ctls, Dial: func(ctx context.Context, addr string, tc *tls.Config, conf *quicnet.Config) (c *quicnet.Conn, err error) {
		err = tp.Client.Do(func() error {
			c, err = quicnet.Dial(ctx, addr, tc, conf)
			return err
		})
		return c, err
	}, DialEarly: func(ctx context.Context, addr string, tc *tls.Config, conf *quicnet.Config, data []byte) (c *quicnet.Conn, s *quicnet.Stream, err error) {
		err = tp.Client.Do(func() error {
			c, s, err = quicnet.DialEarly(ctx, addr, tc, conf, data)
			return err
		})
		return c, s, err
	}}
	return "https://" + ln.Addr().String(), tr
}

// bugStalePTO is kquic's known module bug (kquic/stalepto_test.go has the
// deterministic reproducer): a quic-go peer's connection goes silent until
// its idle timeout, and quic-go has dropped Handshake packets the kernel
// sent after the handshake.
var bugStalePTO = testenv.KnownModuleBug{
	What:   "a loss timer that fired while the socket was owned runs its PTO after the flight was acknowledged, probes the Handshake space after the handshake, and the probe, which a peer that dropped its Handshake keys (quic-go) never acknowledges, stays in flight for good: Nagle then holds small writes and the congestion window fills",
	SeenOn: []string{"build-id:0b7ae3ea4e929003c3b78d43dc501d9a52ba2d2e", "lxin/quic@03a9c7cdb2d5", "code:b90fe60cc0a8480fbe5fc55f33e6013e"},
	Flaky:  true,
}

// quicGoConfig is the QUIC configuration of quic-go's http3 client: a
// tracer counts the Handshake packets it drops for want of keys, the mark
// of the stale-PTO bug.
func quicGoConfig(t testing.TB) *quic.Config {
	d := &dropCounter{}
	drops.Store(t.Name(), d)
	return &quic.Config{Tracer: func(context.Context, bool, quic.ConnectionID) qlogwriter.Trace { return d }}
}

type dropCounter struct{ n atomic.Int32 }

func (c *dropCounter) AddProducer() qlogwriter.Recorder { return c }
func (c *dropCounter) Close() error                     { return nil }
func (c *dropCounter) RecordEvent(ev qlogwriter.Event) {
	if d, ok := ev.(qlog.PacketDropped); ok && d.Header.PacketType == qlog.PacketTypeHandshake && d.Trigger == qlog.PacketDropKeysUnavailable {
		c.n.Add(1)
	}
}

// knownFailure reports err as the module's stale-PTO bug where it is one:
// quic-go's client timed out idle after dropping late Handshake packets.
func knownFailure(t *testing.T, err error) {
	t.Helper()
	v, ok := drops.Load(t.Name())
	if !ok {
		for name := t.Name(); strings.Contains(name, "/") && !ok; {
			name = name[:strings.LastIndex(name, "/")]
			v, ok = drops.Load(name)
		}
	}
	if !ok || !strings.Contains(err.Error(), "no recent network activity") {
		return
	}
	if n := v.(*dropCounter).n.Load(); n > 0 {
		testenv.ModuleBug(t, bugStalePTO, true, fmt.Sprintf("%v; quic-go dropped %d Handshake packets from the kernel after the handshake", err, n))
	}
}
