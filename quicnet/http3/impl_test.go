package http3_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/quic-go/quic-go"
	quichttp3 "github.com/quic-go/quic-go/http3"
	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"

	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

// The tests run this package over the QUIC implementation quicnet's Auto
// chooses here (quicnet.Implementation()): kernel QUIC in the guest with
// the module, quic-go elsewhere, or the one $QUICNET_IMPLEMENTATION names.

// requireImpl skips where the implementation under test is not to run:
// kernel QUIC without the module (a failure where $KQUIC_REQUIRE lists
// quic), and quic-go in a guest (the host runs these tests over quic-go,
// the guest is for kernel QUIC; benchmarks run in both).
func requireImpl(t testing.TB) {
	t.Helper()
	if quicnet.Implementation() == quicnet.Kernel {
		requireKernel(t)
		return
	}
	if _, bench := t.(*testing.B); bench {
		return // benchmarks compare with kernel QUIC in the guest
	}
	hostOnly(t, "over quic-go the host run covers it; the guest runs it over kernel QUIC")
}

// startQuicGoServerFor starts quic-go's http3 server on loopback for this
// package's client. A kernel QUIC client reaches it there since quicnet
// caps its first flight's datagrams at 1200 bytes (before, the module's
// first Initial took loopback's MTU, 1624 bytes, which quic-go never read
// whole, and these tests went over a veth pair at MTU 1400).
func startQuicGoServerFor(t *testing.T, h http.Handler, opts ...func(*quichttp3.Server)) (string, *http3.Transport) {
	t.Helper()
	requireImpl(t)
	return startQuicGoServer(t, h, opts...), &http3.Transport{}
}

// quicGoConfig is the QUIC configuration of quic-go's http3 client: over
// kernel QUIC, a tracer counts the Handshake packets it drops for want of
// keys, the mark of the stale-PTO bug.
func quicGoConfig(t testing.TB) *quic.Config {
	if quicnet.Implementation() != quicnet.Kernel {
		return nil
	}
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
