//go:build linux

package remote

import (
	"context"
	"testing"
	"time"

	"kquic.dev/bench"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/rr"
	"kquic.dev/bench/results"
)

// TestTwoHostRR runs rr cells against a kqbench server: the server learns
// the sizes from the stream, answers, and reports its host's CPU.
func TestTwoHostRR(t *testing.T) {
	h := newHosts(t, nil)
	c, err := h.dial(t, Config{Token: token, Fingerprint: h.srv.Fingerprint()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	spec := matrix.Spec{
		Transports: []string{"tcp", "quic-go"}, Mode: rr.Name, ReqSize: 200, Conns: []int{2},
		Sizes: []int{3000}, MTUs: []int{1500}, GSO: []bool{true}, Crypto: []bool{true, false},
		Streams: 1, Time: 400 * time.Millisecond, Warmup: 100 * time.Millisecond, Repeat: 2,
	}
	doc, err := (&bench.Runner{Spec: spec, Client: h.devA, Server: c, Topology: "test", Peer: c.Peer()}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for _, cell := range doc.Cells {
		if cell.Status == results.StatusNA {
			continue
		}
		if cell.Status != results.StatusOK || rr.SummaryOf(&cell) == nil {
			t.Errorf("%s: %s %s (rr %v)", cell.Key, cell.Status, cell.Error, cell.Payload)
			continue
		}
		ok++
		for _, s := range cell.Samples {
			if rs := rr.SampleOf(&s); rs == nil || rs.Requests == 0 || s.ServerCPU == nil || s.ServerCPU.BusyCores <= 0 {
				t.Errorf("%s: sample rr %+v, server CPU %+v", cell.Key, s.Payload, s.ServerCPU)
			}
		}
	}
	if ok != 2 {
		t.Errorf("%d cells measured, want 2 (tcp, quic-go)", ok)
	}
}
