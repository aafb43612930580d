//go:build linux

package bench_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench"
	"kquic.dev/bench/latency"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/rr"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

func rrSpec(transports ...string) matrix.Spec {
	return matrix.Spec{
		Transports: transports, Mode: rr.Name, ReqSize: 100, Conns: []int{1, 4},
		Sizes: []int{4 << 10}, MTUs: []int{1500}, GSO: []bool{true}, Crypto: []bool{true, false},
		Streams: 1, Time: 500 * time.Millisecond, Warmup: 200 * time.Millisecond, Repeat: 2,
	}
}

// TestRRMatrix runs rr mode over every transport this kernel has, with one
// and four connections, and checks what the figures must satisfy: every
// round trip of the samples is in the cell's histogram, the percentiles are
// in order, and Little's law holds - with n requests in flight, requests
// per second times the mean round trip is n (the loop's own time between
// round trips aside).
func TestRRMatrix(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth, kmod.FeatureTLS)
	ts := []string{"ktls", "tcp", "quic-go"}
	if kmod.Probe(kmod.FeatureQUIC) == nil {
		ts = append([]string{"kquic"}, ts...)
	} else {
		t.Log("kernel QUIC module not loaded: kquic left out (set KQUIC_MODULE)")
	}
	out := filepath.Join(t.TempDir(), "rr.json")
	spec := rrSpec(ts...)
	doc, err := (&bench.Runner{Spec: spec, Out: out}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := roundRobin(t, doc, spec.Repeat); n == 0 {
		t.Error("no comparison group with two transports measured")
	}
	measured := map[string]bool{}
	for _, c := range doc.Cells {
		switch c.Status {
		case results.StatusOK:
		case results.StatusNA:
			continue
		default:
			t.Errorf("%s: %s %s %s", c.Key, c.Status, c.Error, c.Note)
			continue
		}
		measured[c.Transport] = true
		sum := rr.SummaryOf(&c)
		if sum == nil || len(c.Samples) != spec.Repeat {
			t.Errorf("%s: rr summary %v, %d samples", c.Key, c.Payload, len(c.Samples))
			continue
		}
		var requests int64
		for _, s := range c.Samples {
			rs := rr.SampleOf(&s)
			requests += rs.Requests
			h, err := latency.Decode(rs.Histogram)
			if err != nil || h.Count() != rs.Requests || rs.Latency.Count != rs.Requests {
				t.Errorf("%s: sample of %d requests has a histogram of %v (%v), summary of %d", c.Key, rs.Requests, h, err, rs.Latency.Count)
			}
			if s.Bytes != rs.Requests*int64(c.ReqSize+c.Size) {
				t.Errorf("%s: %d bytes for %d round trips of %d+%d", c.Key, s.Bytes, rs.Requests, c.ReqSize, c.Size)
			}
			// Little's law, per sample: requests/s x mean round trip is
			// the requests in flight, at most one per connection. (A
			// round trip counts whole if it starts in the window, so
			// each connection can gain up to the longest one; it can
			// lose a round trip that started before the window, however
			// long a stall of the machine made it, so there is no
			// lower bound here.)
			inFlight := rs.PerSecond * rs.Latency.Mean.Seconds()
			edge := rs.Latency.Max.Seconds() / s.Seconds
			if hi := float64(c.Conns) * (1 + edge) * 1.02; inFlight > hi {
				t.Errorf("%s: %.0f requests/s x mean %v = %.2f requests in flight, want at most %.2f",
					c.Key, rs.PerSecond, rs.Latency.Mean, inFlight, hi)
			}
			// Between its round trips the loop does next to nothing:
			// each connection has a request in flight nearly all the
			// time from its first measured round trip to its last. (Over
			// TCP in the emulated guest a round trip is about 66 µs, so a
			// few µs of the loop is some %: 89% on a loaded machine.)
			if rs.InFlight < 0.8 || rs.InFlight > 1 {
				t.Errorf("%s: a request in flight %.1f%% of the time, want 80-100%%", c.Key, rs.InFlight*100)
			}
		}
		l := sum.Latency
		if l.Count != requests {
			t.Errorf("%s: merged histogram holds %d round trips, the samples %d", c.Key, l.Count, requests)
		}
		if !(l.Min > 0 && l.Min <= l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.P9999 && l.P9999 <= l.Max) {
			t.Errorf("%s: percentiles out of order: %v", c.Key, l)
		}
		// A 4 KiB response is three packets at MTU 1500: without
		// stream_data_nodelay the module holds the last one until the
		// first are acknowledged, and the client's delayed ACK (25 ms)
		// sets the pace (measured: p50 32 ms, against 0.2 ms with it):
		// every round trip would then wait at least the 25 ms timer. A
		// loaded emulated machine reached 10.7 ms with 4 connections.
		if c.Transport == "kquic" && l.P50 > 20*time.Millisecond {
			t.Errorf("%s: median round trip %v: a response waits for a delayed ACK (is stream_data_nodelay set?)", c.Key, l.P50)
		}
		if sum.MinPerSecond > sum.MedianPerSecond || sum.MedianPerSecond > sum.MaxPerSecond {
			t.Errorf("%s: requests/s min %v median %v max %v", c.Key, sum.MinPerSecond, sum.MedianPerSecond, sum.MaxPerSecond)
		}
	}
	for _, tr := range ts {
		if !measured[tr] {
			t.Errorf("%s: no cell measured", tr)
		}
	}

	// Everything is in the JSON, and the tables and CSV show it.
	back, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if back.Spec.Mode != rr.Name || len(back.Cells) != len(doc.Cells) {
		t.Fatalf("reloaded: mode %q, %d cells; want rr, %d", back.Spec.Mode, len(back.Cells), len(doc.Cells))
	}
	for i, c := range back.Cells {
		a, b := rr.SummaryOf(&c), rr.SummaryOf(&doc.Cells[i])
		if (a == nil) != (b == nil) || a != nil && *a != *b {
			t.Errorf("%s: rr summary %+v after reload, %+v before", c.Key, a, b)
		}
	}
	var tb bytes.Buffer
	if err := render.WriteTables(&tb, back); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"100-byte requests, 1 connection(s)", "4 connection(s)", "p99.99", "requests/s"} {
		if !strings.Contains(tb.String(), want) {
			t.Errorf("tables lack %q:\n%s", want, tb.String())
		}
	}
	t.Logf("\n%s", tb.String())
	var cb bytes.Buffer
	if err := render.WriteCSV(&cb, back); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cb).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	p99 := slices.Index(rows[0], "p99_us")
	if p99 < 0 || len(rows) != len(back.Cells)+1 {
		t.Fatalf("CSV: header %v, %d rows", rows[0], len(rows))
	}
	for _, r := range rows[1:] {
		if r[slices.Index(rows[0], "status")] == string(results.StatusOK) && r[p99] == "" {
			t.Errorf("CSV row %s has no p99", r[0])
		}
	}
}

func TestRRSpecValidation(t *testing.T) {
	s := rrSpec("tcp")
	if err := s.Validate(); err != nil {
		t.Fatalf("valid rr spec: %v", err)
	}
	s.ReqSize, s.Conns = 0, []int{0}
	err := s.Validate()
	if err == nil || !strings.Contains(err.Error(), "request size 0") || !strings.Contains(err.Error(), "connections 0") {
		t.Fatalf("bad rr spec: %v", err)
	}
	s = rrSpec("tcp")
	s.Mode = "pingpong"
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), `mode "pingpong"`) {
		t.Fatalf("unknown mode: %v", err)
	}
	// rr cells key apart from bulk ones and from each other.
	keys := map[string]bool{}
	two := rrSpec("tcp", "kquic")
	for _, c := range two.Cells() {
		if keys[c.Key()] || !strings.Contains(c.Key(), "/rr/req=100/") {
			t.Fatalf("cell key %q repeated or not rr", c.Key())
		}
		keys[c.Key()] = true
	}
	if len(keys) != 2*2*2 {
		t.Fatalf("%d rr cells, want 8 (2 transports x 2 conns x 2 crypto)", len(keys))
	}
}
