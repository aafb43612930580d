//go:build linux

package interop

import (
	"context"
	"strings"
	"testing"
	"time"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// The kernel QUIC rows, in the guest with $KQUIC_MODULE: kquic against
// kquic and quic-go in both roles passes the host part's cases
// (handshakeloss aside: the module's slow recovery of a lost handshake is a
// known limit, README; and zerortt from kquic's client closed with
// STREAM_STATE_ERROR by its kernel, the module's stream ID reset after
// 0-RTT, kquic/knownbugs_test.go's bugEarlyStreamID, timing-dependent).
func TestKquicPairs(t *testing.T) {
	testenv.Require(t, kmod.FeatureQUIC)
	k, err := OpenImpl("kquic")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Servers: []Impl{k, QuicGo{}}, Clients: []Impl{k, QuicGo{}},
		Cases: cases(t, "handshake", "transfer", "retry", "resumption", "zerortt", "keyupdate", "v2", "ipv6", "transferloss",
			"amplificationlimit", "multiconnect", "rebind-port", "blackhole"),
		Dir: t.TempDir(), Scale: 0.1, Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	WriteMatrix(&b, res)
	t.Logf("module %s:\n%s", testenv.ModuleBuild(), b.String())
	for _, r := range res {
		if r.Server == "quic-go" && r.Client == "quic-go" {
			continue // the host part's
		}
		if r.Status != Pass && r.Server == "kquic" && r.Client == "quic-go" && strings.Contains(r.Reason, "STREAM_STATE_ERROR (remote) (frame type: 0x11)") {
			// Seen once in 4 runs (transfer): the module closed the
			// connection on quic-go's MAX_STREAM_DATA for a stream it had
			// finished (README, known module bugs), as it does for a STREAM
			// frame of a released stream (below).
			t.Logf("%s, client %s, server %s: %s: %s (module: STREAM_STATE_ERROR for MAX_STREAM_DATA on a finished stream)", r.Case, r.Client, r.Server, r.Status, r.Reason)
			continue
		}
		if r.Status != Pass && r.Case == "zerortt" && r.Client == "kquic" && strings.Contains(r.Reason, "STREAM_STATE_ERROR") {
			t.Logf("%s, client %s, server %s: %s: %s (known module bug: a retransmitted STREAM frame for the released 0-RTT stream 0)", r.Case, r.Client, r.Server, r.Status, r.Reason)
			continue
		}
		if r.Status != Pass {
			t.Errorf("%s, client %s, server %s: %s: %s", r.Case, r.Client, r.Server, r.Status, r.Reason)
		}
	}
}
