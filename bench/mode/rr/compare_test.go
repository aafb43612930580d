package rr_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench/latency"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/rr"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

// rrSynthetic is an rr document with one kquic cell of n samples, round
// trips log-normal around median p50, one request in flight.
func rrSynthetic(seed uint64, n int, p50 time.Duration) *results.Document {
	rnd := rand.New(rand.NewPCG(seed, 9))
	d := &results.Document{Schema: results.SchemaVersion, Spec: rrSpec("kquic")}
	d.Env.CPUModel, d.Env.CPUs = "test CPU", 2
	c := d.Spec.Cells()[0]
	r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK, Offloads: "mtu=1500; note"}
	for i := 0; i < n; i++ {
		h := latency.New()
		var sum time.Duration
		for j := 0; j < 2000; j++ {
			v := time.Duration(float64(p50) * (1 + 0.3*rnd.NormFloat64()))
			h.Record(v)
			sum += max(v, 1)
		}
		enc, _ := h.Encode()
		rps := 2000 / sum.Seconds()
		r.Samples = append(r.Samples, results.Sample{Bytes: 2000 * int64(c.ReqSize+c.Size), Seconds: sum.Seconds(), Bps: rps * float64(c.ReqSize+c.Size) * 8,
			Payload: &rr.Sample{Requests: 2000, PerSecond: rps, Latency: h.Summary(), Histogram: enc, InFlight: 1}})
	}
	r.Summarize()
	d.Cells = append(d.Cells, r)
	return d
}

// kqbench compare on rr runs: a round trip twice as long is a significant
// change of requests/s and of the percentiles; the same distribution is not.
func TestCompareRR(t *testing.T) {
	old := rrSynthetic(1, 8, 100*time.Microsecond)
	slow := rrSynthetic(2, 8, 200*time.Microsecond)
	same := rrSynthetic(3, 8, 100*time.Microsecond)
	if sum := rr.SummaryOf(&old.Cells[0]); sum == nil || sum.Latency.Count != 16000 {
		t.Fatalf("summary %+v", old.Cells[0].Payload)
	}
	c, err := results.Compare(old, slow, results.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]results.Delta{}
	for _, d := range c.Cells[0].Figures {
		got[d.Name] = d
	}
	if d := got["requests/s"]; !d.Significant || d.ChangePct > -45 || d.ChangePct < -55 {
		t.Errorf("requests/s at twice the round trip: %+v, want about -50%%, significant", d)
	}
	if d := got["p50 µs"]; !d.Significant || d.ChangePct < 90 || d.ChangePct > 110 {
		t.Errorf("p50 at twice the round trip: %+v, want about +100%%, significant", d)
	}
	var out bytes.Buffer
	render.WriteComparison(&out, c, render.ComparisonView{})
	for _, want := range []string{"  requests/s", "  p99 µs", "  p99.9 µs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("comparison lacks %q:\n%s", want, out.String())
		}
	}
	c, err = results.Compare(old, same, results.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range c.Cells[0].Figures {
		if d.Name != "p99.9 µs" && d.Significant { // the far tail of 2000 values moves by chance
			t.Errorf("same distribution: %s %+v, want not significant", d.Name, d)
		}
	}
	// A bulk run and an rr run are not compared without --force.
	bulk := &results.Document{Schema: results.SchemaVersion, Env: old.Env, Spec: matrix.Spec{Sizes: old.Spec.Sizes, Streams: 1}}
	bc := matrix.Cell{Transport: "kquic", Size: 4 << 10, MTU: 1500, GSO: true, Crypto: true, Direction: matrix.Up, Streams: 1}
	bulk.Cells = []results.CellResult{{Cell: bc, Key: bc.Key(), Status: results.StatusOK, Samples: []results.Sample{{Bps: 1e8, Bytes: 1e6}}}}
	if _, err := results.Compare(bulk, old, results.CompareOptions{}); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Errorf("bulk against rr: %v, want refused for the mode", err)
	}
}

// rrSpec is an rr matrix of the transports: 100-byte requests, 4 KiB
// responses, one and four connections.
func rrSpec(transports ...string) matrix.Spec {
	return matrix.Spec{
		Transports: transports, Mode: rr.Name, ReqSize: 100, Conns: []int{1, 4},
		Sizes: []int{4 << 10}, MTUs: []int{1500}, GSO: []bool{true}, Crypto: []bool{true, false},
		Streams: 1, Time: 500 * time.Millisecond, Warmup: 200 * time.Millisecond, Repeat: 2,
	}
}
