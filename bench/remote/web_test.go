//go:build linux

package remote

import (
	"context"
	"testing"
	"time"

	"kquic.dev/bench"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/h3"
	"kquic.dev/bench/results"
)

// TestTwoHostWeb runs h3-mode cells against a kqbench server: the server
// serves the handler over quic-go's HTTP/3 and HTTP/2 over TLS, the client
// trusts the certificate it sent, every body is checked, and the server's
// namespace's counters come back.
func TestTwoHostWeb(t *testing.T) {
	h := newHosts(t, nil)
	c, err := h.dial(t, Config{Token: token, Fingerprint: h.srv.Fingerprint()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	spec := matrix.Spec{
		Mode: h3.Name, Transports: []string{h3.QuicGo, h3.H2CryptoTLS}, Sizes: []int{100<<10 + 3},
		MTUs: []int{1500}, GSO: []bool{true}, Crypto: []bool{true}, Streams: 2, Conns: []int{1},
		Time: 500 * time.Millisecond, Repeat: 1,
		Settings: &h3.WebSpec{Workloads: []string{h3.WorkloadDownload, h3.WorkloadUpload, h3.WorkloadObjects, h3.WorkloadSetupFull}, ObjectSize: 1000, Resources: 2, Rounds: 1},
	}
	doc, err := (&bench.Runner{Spec: spec, Client: h.devA, Server: c, Topology: "test", Peer: c.Peer()}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Cells) != 8 {
		t.Errorf("%d cells, want 8", len(doc.Cells))
	}
	for _, cell := range doc.Cells {
		if cell.Status != results.StatusOK || h3.SummaryOf(&cell) == nil {
			t.Errorf("%s: %s %s %s", cell.Key, cell.Status, cell.Note, cell.Error)
			continue
		}
		s := h3.SampleOf(&cell.Samples[0])
		if h3.SummaryOf(&cell).Errors != 0 || s.Requests < 1 || s.ServerRcvbufErrors < 0 || s.Server.Protocol == "" {
			t.Errorf("%s: %d requests, %d failed, server drops %d, server settings %+v", cell.Key, s.Requests, h3.SummaryOf(&cell).Errors, s.ServerRcvbufErrors, s.Server)
		}
	}
}
