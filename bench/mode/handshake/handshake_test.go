//go:build linux

package handshake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
	"kquic.dev/internal/netns"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

// addDelay puts a netem qdisc delaying every packet by d on the device.
func addDelay(t *testing.T, dev *topo.Device, d time.Duration) {
	t.Helper()
	err := dev.Do(func() error {
		l, err := netlink.LinkByName(dev.Name())
		if err != nil {
			return err
		}
		q := netlink.NewNetem(netlink.QdiscAttrs{LinkIndex: l.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
			netlink.NetemQdiscAttrs{Latency: uint32(d.Microseconds())})
		return netlink.QdiscAdd(q)
	})
	if err != nil {
		t.Fatalf("netem delay %v on %s: %v", d, dev.Name(), err)
	}
}

// TestHandshakeRoundTrips measures every setup of handshake mode over a
// veth pair whose packets netem delays by RTT/2 each way, and checks that
// the time to the first byte of the answer is the round trips the setup
// needs, plus the request's own:
//
//   - plain TCP: SYN, SYN-ACK (1), then the request and its answer (1): 2.
//   - TCP + TLS 1.3 (ktls): TCP (1), ClientHello to the server's flight
//     ending in Finished (1), then the client's Finished and the request
//     leave together (1): 3.
//   - QUIC 1-RTT (kquic, quic-go): Initial with the ClientHello to the
//     server's flight (1), then the client's Finished with the request (1): 2.
//   - quic-go 0-RTT: the request goes with the ClientHello and the server
//     answers in its first flight (0.5-RTT data): 1.
//   - kquic 0-RTT: 2, not 1. The request does leave with the ClientHello
//     (the test checks the server accepted 0-RTT), but the module keeps
//     0-RTT stream data from the application until the server has the
//     client's 1-RTT key (net/quic/socket.c: early_list is spliced into
//     recv_list only then), and crypto/tls gives a server that key only with
//     the client's Finished, a round trip after the ClientHello: so the
//     server reads the request no sooner than with a full handshake. And
//     in some runs (under TCG, about one in three) the server does not take
//     the 0-RTT packet, which leaves right behind the ClientHello: it is not
//     acknowledged, no drop is counted on the server, and the client's
//     module sends the request again in 1-RTT once it sees it lost: 3 round
//     trips. That is accepted only with the client's retransmissions
//     (QuicFrmRetrans) at least one per exchange.
//
// Under emulation (qemu TCG) a handshake's cryptography takes a few hundred
// milliseconds of CPU, so each setup is first measured without delay and the
// check is on what the delay adds: the fastest exchange with the delay less
// the fastest without must lie within n RTT +- 0.35 RTT, so a setup one round
// trip off cannot pass; and the fastest exchange with the delay must take at
// least n RTT, which no compute can shorten. The round trip is 1 s: the
// cryptography's cost varies by a few hundred milliseconds on a loaded
// machine (at 500 ms a loaded run added 2.45 RTT to kquic 0-RTT's fastest
// exchange, outside the tolerance, with no retransmission in it).
func TestHandshakeRoundTrips(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth, kmod.FeatureNetem, kmod.FeatureQUIC, kmod.FeatureTLS)
	const rtt = time.Second
	tp, err := topo.NewPrepared(1500, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Close()
	cases := []struct {
		transport string
		early     bool
		rtts      int
	}{
		{"tcp", false, 2},
		{"ktls", false, 3},
		{"kquic", false, 2},
		{"kquic", true, 2},
		{"quic-go", false, 2},
		{"quic-go", true, 1},
	}
	cell := func(i int) matrix.Cell {
		tc := cases[i]
		return matrix.Cell{Transport: tc.transport, Size: 64, MTU: 1500, GSO: true, Crypto: tc.transport != "tcp", Direction: "up", Streams: 1, Early: tc.early}
	}
	// run measures exchanges until at least 3 completed in one window,
	// the window doubling from dur: on a loaded emulated machine a kquic
	// exchange took 1 s of CPU, and 2 s held 2 of them. A sample with no
	// exchange in its window is the mode's error; it is taken again with a
	// longer window too.
	run := func(c matrix.Cell, dur time.Duration) (*Sample, error) {
		o := transport.Options{Crypto: c.Crypto, GSO: true}
		var n int64
		for d := dur; d <= 8*dur; d *= 2 {
			smp, err := Measure(context.Background(), tp.ClientDevice(), side.Local{T: tp, CPU: -1}, c, o, 300*time.Millisecond, d, nil)
			if err != nil && !errors.Is(err, ErrNoExchange) {
				return nil, err
			}
			if err == nil {
				if n = SampleOf(&smp).Handshakes; n >= 3 {
					return SampleOf(&smp), nil
				}
			}
			t.Logf("%s: %d exchanges in a window of %v (%v): again with %v", SetupName(c), n, d, err, 2*d)
		}
		return nil, fmt.Errorf("%d exchanges in a window of %v; want at least 3", n, 8*dur)
	}
	base := make([]*Sample, len(cases))
	for i := range cases {
		h, err := run(cell(i), 2*time.Second)
		if err != nil {
			t.Fatalf("%s without delay: %v", SetupName(cell(i)), err)
		}
		base[i] = h
	}
	for _, d := range []*topo.Device{tp.ClientDevice(), tp.ServerDevice()} {
		addDelay(t, d, rtt/2)
	}
	for i, tc := range cases {
		c := cell(i)
		t.Run(SetupName(c), func(t *testing.T) {
			want := time.Duration(tc.rtts) * rtt
			srv0, cli0 := quicSNMP(t, tp.Server), quicSNMP(t, tp.Client)
			// Room for three exchanges of one round trip more than
			// wanted (kquic 0-RTT takes 3 when the module drops an early
			// 0-RTT packet, checked below): at 3*(want+500ms) a run
			// with one such exchange ended only 2 in the window.
			h, err := run(c, 3*(want+rtt+500*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			srv, cli := moved(quicSNMP(t, tp.Server), srv0), moved(quicSNMP(t, tp.Client), cli0)
			l, b := h.TTFB, base[i].TTFB
			added := hsUS(l.Min - b.Min)
			if c.Transport == "kquic" {
				t.Logf("the module's counters over the run: server %v; client %v", srv, cli)
			}
			t.Logf("%d exchanges; TTFB min %v p50 %v max %v; without delay min %v p50 %v; the delay added %v, want %d RTT = %v; resumed %d, 0-RTT %d",
				h.Handshakes, hsUS(l.Min), hsUS(l.P50), hsUS(l.Max), hsUS(b.Min), hsUS(b.P50), added, tc.rtts, want, h.Resumed, h.Early)
			tol := rtt * 35 / 100
			if tc.transport == "kquic" && tc.early && added > want+rtt-tol && added < want+rtt+tol {
				if n := cli["QuicFrmRetrans"]; n < uint64(h.Handshakes) {
					t.Errorf("the delay added %v, a round trip more than %v, and the client's module retransmitted %d frames in %d exchanges: the extra round trip is not the resent request", added, want, n, h.Handshakes)
				} else {
					t.Logf("KNOWN MODULE PROBLEM: every exchange took a round trip more (%v added): the server did not take the 0-RTT packet and the client's module sent the request again (%d frames retransmitted in %d exchanges)", added, n, h.Handshakes)
				}
			} else if added < want-tol || added > want+tol {
				t.Errorf("the delay added %v to the fastest exchange: not %d round trips of %v (want %v to %v)", added, tc.rtts, rtt, want-tol, want+tol)
			}
			if min := hsUS(l.Min); min < want-time.Millisecond {
				t.Errorf("fastest TTFB %v is under the %v that %d round trips take at least: the delay is not on the path", min, want, tc.rtts)
			}
			if tc.early && (h.Early != h.Handshakes || h.Resumed != h.Handshakes) {
				t.Errorf("of %d exchanges %d resumed and %d used 0-RTT; want all", h.Handshakes, h.Resumed, h.Early)
			}
			if !tc.early && (h.Early != 0 || h.Resumed != 0) {
				t.Errorf("full handshakes: %d resumed, %d used 0-RTT; want none", h.Resumed, h.Early)
			}
		})
	}
}

// quicSNMP reads the module's counters in a namespace: from
// /proc/thread-self (kquic.ReadSNMP's /proc/net is /proc/self/net, the
// namespace of the process's main thread).
func quicSNMP(t *testing.T, ns *netns.NS) map[string]uint64 {
	t.Helper()
	var m map[string]uint64
	if err := ns.Do(func() error {
		f, err := os.Open("/proc/thread-self/net/quic/snmp")
		if err != nil {
			return err
		}
		defer f.Close()
		m, err = kquic.ParseSNMP(f)
		return err
	}); err != nil {
		t.Fatalf("read the QUIC module's counters: %v", err)
	}
	return m
}

// moved is b less a, leaving out the counters that did not move.
func moved(b, a map[string]uint64) map[string]uint64 {
	out := map[string]uint64{}
	for k, v := range b {
		if v != a[k] {
			out[k] = v - a[k]
		}
	}
	return out
}

func hsUS(v int64) time.Duration { return time.Duration(v) * time.Microsecond }

// TestHandshakeSummary merges the samples' histograms: the cell's
// percentiles are those of all exchanges, not a mean of the samples'.
func TestHandshakeSummary(t *testing.T) {
	ex := func(ms ...int) []transport.Exchange {
		var out []transport.Exchange
		for _, m := range ms {
			out = append(out, transport.Exchange{TTFB: time.Duration(m) * time.Millisecond, Resumed: true})
		}
		return out
	}
	a, err := newHandshakeSample(ex(10, 10, 10, 10), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newHandshakeSample(ex(50, 50, 50, 50, 50, 50), 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := results.CellResult{Samples: []results.Sample{{Payload: a}, {Payload: b}}}
	r.Summarize()
	h := SummaryOf(&r)
	if h == nil {
		t.Fatal("no summary")
	}
	if h.Handshakes != 10 || h.Resumed != 10 || h.Early != 0 {
		t.Errorf("counts %d/%d/%d, want 10/10/0", h.Handshakes, h.Resumed, h.Early)
	}
	// Rates 4/s and 3/s: median 3.5, spread 1/3.5.
	if h.MedianPerSecond != 3.5 || fmt.Sprintf("%.3f", h.Spread) != "0.286" || !h.WideSpread {
		t.Errorf("rate median %v spread %v wide %v; want 3.5, 0.286, true", h.MedianPerSecond, h.Spread, h.WideSpread)
	}
	// Six of ten exchanges took 50 ms: the median of all is 50 ms (a mean of
	// the samples' medians would be 30).
	if got := hsUS(h.TTFB.P50).Round(time.Millisecond); got != 50*time.Millisecond {
		t.Errorf("merged p50 %v, want 50ms", got)
	}
	if got := hsUS(h.TTFB.Min).Round(time.Millisecond); got != 10*time.Millisecond {
		t.Errorf("merged min %v, want 10ms", got)
	}
}

// TestCompareHandshakes: kqbench compare of two handshake-mode runs
// compares the handshake rates, not the (absent) goodput.
func TestCompareHandshakes(t *testing.T) {
	doc := func(rates ...float64) *results.Document {
		d := &results.Document{Schema: results.SchemaVersion, Spec: matrix.Spec{Mode: Name, Sizes: []int{64}, Streams: 1}}
		d.Env.CPUModel, d.Env.CPUs = "test CPU", 2
		c := matrix.Cell{Transport: "kquic", Size: 64, MTU: 1500, GSO: true, Crypto: true, Direction: "up", Streams: 1, Early: true}
		r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK}
		for _, v := range rates {
			hs, err := newHandshakeSample([]transport.Exchange{{TTFB: time.Millisecond}}, 1/v, 1)
			if err != nil {
				t.Fatal(err)
			}
			r.Samples = append(r.Samples, results.Sample{Bytes: 128, Payload: hs})
		}
		r.Summarize()
		d.Cells = append(d.Cells, r)
		return d
	}
	c, err := results.Compare(doc(100, 102, 98, 101, 99, 100), doc(150, 149, 152, 151, 148, 150), results.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := c.Cells[0].Goodput
	if g.Name != "handshakes/s" || !g.Significant || g.ChangePct < 45 || g.ChangePct > 55 {
		t.Errorf("comparison %+v; want handshakes/s up by about 50%%, significant", g)
	}
	var out bytes.Buffer
	render.WriteComparison(&out, c, render.ComparisonView{})
	if !strings.Contains(out.String(), "old handshakes/s") {
		t.Errorf("comparison table does not name handshakes/s:\n%s", out.String())
	}
}
