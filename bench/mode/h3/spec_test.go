package h3_test

import (
	"strings"
	"testing"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/h3"
)

func h3Spec() matrix.Spec {
	return matrix.Spec{Mode: h3.Name, Transports: h3.Transports(), Sizes: []int{1 << 20, 16 << 20}, MTUs: []int{1500}, GSO: []bool{true},
		Streams: 8, Conns: []int{1, 4}, Time: time.Second, Repeat: 3, Settings: &h3.WebSpec{Workloads: []string{"download", "objects", "page", "setup"}, ObjectSize: 4096, Resources: 20, Rounds: 5}}
}

// TestH3Cells enumerates every workload of every transport: a download per
// size, the objects per connection count, one page, three setups.
func TestH3Cells(t *testing.T) {
	s := h3Spec()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	cells := s.Cells()
	if want := len(h3.Transports()) * (2 + 2 + 1 + 3); len(cells) != want {
		t.Fatalf("%d cells, want %d", len(cells), want)
	}
	keys := map[string]bool{}
	for _, c := range cells {
		if keys[c.Key()] {
			t.Errorf("key %s twice", c.Key())
		}
		keys[c.Key()] = true
		if c.Workload == h3.WorkloadSetup0RTT && !c.Early {
			t.Errorf("%s: a 0-RTT setup not marked early", c.Key())
		}
	}
	for _, k := range []string{"h3-kquic/h3/download/size=16777216/mtu=1500/gso=on", "h2-tls/h3/objects/size=4096/mtu=1500/gso=on/conns=4/streams=8",
		"h3-quic-go/h3/page/size=4096/mtu=1500/gso=on/resources=20", "h3-quic-go/h3/setup-0rtt/size=1/mtu=1500/gso=on/0rtt"} {
		if !keys[k] {
			t.Errorf("no cell %s", k)
		}
	}
}

// TestH3Validate names every problem of a bad h3 spec.
func TestH3Validate(t *testing.T) {
	s := h3Spec()
	s.Transports = append(s.Transports, "kquic")
	w := s.Settings.(*h3.WebSpec)
	w.Workloads = append(w.Workloads, "teleport")
	s.Sizes = append(s.Sizes, 2<<30)
	w.ObjectSize = 2 << 20
	s.Conns = []int{0}
	err := s.Validate()
	for _, want := range []string{`transport "kquic"`, `workload "teleport"`, "size 2147483648", "object size 2097152", "connections 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
	s = h3Spec()
	s.Settings = nil
	if err := s.Validate(); err == nil {
		t.Error("a spec without its web settings validated")
	}
}
