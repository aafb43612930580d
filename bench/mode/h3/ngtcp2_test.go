//go:build linux

package h3_test

import (
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/h3"
	"kquic.dev/bench/ngtcp2"
	"kquic.dev/bench/results"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// TestNgtcp2Row measures the h3-ngtcp2 row for real beside h3-quic-go,
// pinned apart where there are two CPUs: Debian's gtlsserver and
// gtlsclient download and upload the cell's bytes between the veth pair's
// namespaces, and the workloads the programs cannot run are n/a by name.
func TestNgtcp2Row(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth)
	if _, _, err := ngtcp2.Programs(); err != nil {
		testenv.Tool(t, "gtlsclient", "ngtcp2-client")
		testenv.Tool(t, "gtlsserver", "ngtcp2-server")
	}
	spec := webSpec(h3.QuicGo, h3.Ngtcp2)
	spec.Sizes = []int{4 << 20}
	spec.Repeat = 2
	spec.Settings.(*h3.WebSpec).Workloads = []string{"download", "upload", "objects", "page", "setup-full"}
	a, err := matrix.ParseAffinity("auto")
	if err != nil {
		t.Fatal(err)
	}
	spec.Affinity = a
	cells := runWeb(t, spec)
	for _, wl := range []string{"download", "upload"} {
		c, ok := cells[h3.Ngtcp2+" "+wl]
		if !ok || c.Status != results.StatusOK {
			t.Errorf("h3-ngtcp2 %s: %+v", wl, c)
			continue
		}
		for i := range c.Samples {
			s, w := c.Samples[i], h3.SampleOf(&c.Samples[i])
			if w == nil || w.Bytes != int64(c.Size) || w.Requests != 1 || s.Bps < 1e6 || s.Bps > 400e9 || s.Tool == "" {
				t.Errorf("%s: sample %+v, web %+v", c.Key, s, w)
				continue
			}
			if w.Client.Protocol != "h3" || !strings.Contains(w.Client.Stack, "ngtcp2") || w.ServerRcvbufErrors < 0 {
				t.Errorf("%s: settings %+v, drops %d", c.Key, w.Client, w.ServerRcvbufErrors)
			}
		}
		if q := cells[h3.QuicGo+" "+wl]; q.Status != results.StatusOK {
			t.Errorf("h3-quic-go %s beside it: %s %s", wl, q.Status, q.Error)
		}
		t.Logf("%s: ngtcp2 %.0f Mbit/s, quic-go %.0f Mbit/s", wl, c.MedianBps/1e6, cells[h3.QuicGo+" "+wl].MedianBps/1e6)
	}
	for wl, why := range map[string]string{"objects": "holds no load", "page": "HTML first", "setup-full": "process of its own"} {
		if c := cells[h3.Ngtcp2+" "+wl]; c.Status != results.StatusNA || !strings.Contains(c.Note, why) {
			t.Errorf("h3-ngtcp2 %s: %s %q, want n/a: %s", wl, c.Status, c.Note, why)
		}
	}
}
