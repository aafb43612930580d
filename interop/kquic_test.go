//go:build linux

package interop

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kmod/knownbugs"
)

// The kernel QUIC rows, in the guest with $KQUIC_MODULE: kquic against
// kquic and quic-go in both roles passes the host part's cases, but for the
// failures that show a known module bug on a build that has it (status
// known-bug: zerortt from kquic's client, kmod/knownbugs.EarlyStreamID,
// timing-dependent). handshakeloss is left to kqbench interop --vm: the
// module's slow recovery of a lost handshake (knownbugs.InitialAck) makes
// it fail now and then.
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
		Dir: t.TempDir(), Scale: 0.1, Timeout: 2 * time.Minute, Module: knownbugs.Builds("")})
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
		if r.Status == KnownBug {
			// zerortt from kquic's client: knownbugs.EarlyStreamID.
			t.Logf("%s, client %s, server %s: %s: %s (%s)", r.Case, r.Client, r.Server, r.Status, r.Reason, r.KnownBug)
			continue
		}
		if r.Status != Pass {
			t.Errorf("%s, client %s, server %s: %s: %s", r.Case, r.Client, r.Server, r.Status, r.Reason)
		}
	}
}

// kquic-c, the module's own http3_test ($KQUIC_HTTP3_TEST), in the guest
// with $KQUIC_MODULE: its server against quic-go's, ngtcp2's and its own
// client, its client against quic-go's server. Every pair completes a
// handshake (but where quic-go sent a stream's FIN alone and the trace
// shows http3_test dropped it, as server or client: ExplainFailure); http3,
// three requests together over one connection, is unsupported by its
// server. Every result with a kernel end carries the
// module's code hash.
func TestKquicCPairs(t *testing.T) {
	testenv.Require(t, kmod.FeatureQUIC)
	if os.Getenv(HTTP3TestEnv) == "" {
		msg := HTTP3TestEnv + " is not set: give the module's built tests/http3_test (lxin/quic's libquic; this project ships none)"
		if testenv.Required("http3test") {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	c, err := OpenImpl("kquic-c")
	if err != nil {
		t.Fatal(err)
	}
	clients := []Impl{c, QuicGo{}}
	if ng, err := openNgtcp2(); err == nil {
		clients = append(clients, ng)
	}
	builds := knownbugs.Builds("")
	code := knownbugs.CodeHash(builds)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	o := Options{Servers: []Impl{c}, Clients: clients, Cases: cases(t, "handshake", "http3", "multiconnect", "amplificationlimit"),
		Dir: t.TempDir(), Scale: 0.1, Timeout: 2 * time.Minute, Module: builds}
	res, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	o.Servers, o.Clients, o.Cases = []Impl{QuicGo{}}, []Impl{c}, cases(t, "handshake", "longrtt", "amplificationlimit")
	more, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	res = append(res, more...)
	var b strings.Builder
	WriteMatrix(&b, res)
	t.Logf("module %s, %s:\n%s", testenv.ModuleBuild(), os.Getenv(HTTP3TestEnv), b.String())
	for _, r := range res {
		if r.Status != Unsupported && (r.Module != code || code == "") {
			t.Errorf("%s, client %s, server %s: module %q, want the code hash %q", r.Case, r.Client, r.Server, r.Module, code)
		}
		if r.Case == "http3" && r.Server == "kquic-c" && r.Status != Unsupported {
			// Its three requests go together over one connection, which
			// http3_test's server cannot serve.
			t.Errorf("http3, client %s, server kquic-c: %s, want unsupported", r.Client, r.Status)
		}
		must := r.Case == "handshake"
		if must && r.Status != Pass && strings.Contains(r.Reason, loneFINToolBug) {
			// quic-go sent a stream's FIN alone, after the data the peer
			// had read: http3_test drops such a FIN, as its server
			// (TestKquicCServerLoneFIN) and as its client, which the trace
			// showed.
			t.Logf("%s, client %s, server %s: %s: %s", r.Case, r.Client, r.Server, r.Status, r.Reason)
			continue
		}
		if must && r.Status != Pass {
			t.Errorf("%s, client %s, server %s: %s: %s", r.Case, r.Client, r.Server, r.Status, r.Reason)
		}
	}
}
