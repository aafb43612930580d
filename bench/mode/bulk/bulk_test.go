//go:build linux

package bulk

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/mode/native"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/topo"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// bulkSpec is a small bulk spec: two transports, two sizes, both MTUs and
// GSO settings, one encryption setting, both directions, two streams.
func bulkSpec() matrix.Spec {
	s := matrix.DefaultSpec()
	s.Transports = []string{"tcp", "quic-go"}
	s.Sizes = []int{1 << 10, 64 << 10}
	s.Crypto = []bool{true}
	s.Directions = []matrix.Direction{matrix.Up, matrix.Down}
	s.Streams = 2
	return s
}

// The bulk mode is the one a spec without a mode and a cell without a
// driver get, and its cells are every combination of the axes, once, each
// with the spec's streams.
func TestBulkCells(t *testing.T) {
	for _, name := range []matrix.Mode{"", Name} {
		m, err := mode.For(name, matrix.Cell{})
		if err != nil {
			t.Fatalf("mode %q: %v", name, err)
		}
		if _, ok := m.(Mode); !ok || m.Name() != Name {
			t.Errorf("mode %q is %T named %q, want the bulk mode", name, m, m.Name())
		}
	}
	if n := (Mode{}).Needs(); n.SingleHost != "" {
		t.Errorf("bulk mode needs a single host (%q); two-host mode runs it", n.SingleHost)
	}
	s := bulkSpec()
	cells := s.Cells()
	if want := 2 * 2 * 2 * 2 * 1 * 2; len(cells) != want { // transports, sizes, MTUs, GSO, crypto, directions
		t.Fatalf("%d cells, want %d", len(cells), want)
	}
	seen := map[string]bool{}
	for _, c := range cells {
		if seen[c.Key()] {
			t.Errorf("cell %s twice", c.Key())
		}
		seen[c.Key()] = true
		if c.Streams != 2 || c.Mux || c.Driver != "" || !c.Crypto {
			t.Errorf("%s: streams %d, mux %v, driver %q, crypto %v; want 2 streams, the go driver, encrypted", c.Key(), c.Streams, c.Mux, c.Driver, c.Crypto)
		}
	}
	for _, tr := range s.Transports {
		for _, size := range s.Sizes {
			for _, mtu := range s.MTUs {
				for _, gso := range s.GSO {
					for _, dir := range s.Directions {
						c := matrix.Cell{Transport: tr, Size: size, MTU: mtu, GSO: gso, Crypto: true, Direction: dir, Streams: 2}
						if !seen[c.Key()] {
							t.Errorf("no cell %s", c.Key())
						}
					}
				}
			}
		}
	}
	// The native driver doubles every cell, in bulk mode only.
	s.Drivers = []matrix.Driver{matrix.DriverGo, native.Name}
	if err := s.Validate(); err != nil {
		t.Errorf("bulk spec with both drivers: %v", err)
	}
	if n := len(s.Cells()); n != 2*len(cells) {
		t.Errorf("%d cells with both drivers, want %d", n, 2*len(cells))
	}
}

// Validation names every problem of a bulk spec.
func TestBulkValidation(t *testing.T) {
	s := bulkSpec()
	if err := s.Validate(); err != nil {
		t.Fatalf("valid spec: %v", err)
	}
	def := matrix.DefaultSpec()
	if err := def.Validate(); err != nil {
		t.Errorf("the default spec: %v", err)
	}
	bad := bulkSpec()
	bad.Directions = []matrix.Direction{matrix.Up, "sideways"}
	bad.Streams = 0
	bad.Time = 0
	bad.Warmup = -time.Second
	bad.Repeat = 0
	bad.Sizes = []int{0}
	bad.MTUs = []int{576}
	bad.GSO = nil
	err := bad.Validate()
	if err == nil {
		t.Fatal("a spec with eight problems validates")
	}
	for _, want := range []string{`direction "sideways"`, "streams 0", "time 0s", "warmup -1s", "repeat 0", "message size 0", "MTU 576", "--gso and --crypto"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("validation does not name %q:\n%v", want, err)
		}
	}
	none := bulkSpec()
	none.Directions = nil
	if err := none.Validate(); err == nil || !strings.Contains(err.Error(), "no directions") {
		t.Errorf("a bulk spec without directions: %v, want \"no directions\"", err)
	}
	many := bulkSpec()
	many.Streams = 1001
	if err := many.Validate(); err == nil || !strings.Contains(err.Error(), "must be 1..1000") {
		t.Errorf("1001 streams: %v, want the range", err)
	}
}

// One real sample of a cell, plain TCP up with two streams over a veth pair
// between two namespaces, as kqbench matrix takes it: the runner's Check,
// then Sample, the goodput counted at the receiver over the window.
func TestBulkSampleOverVeth(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth)
	tp, err := topo.NewPrepared(1500, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tp.Close() })
	s := bulkSpec()
	s.Transports, s.Sizes, s.MTUs, s.GSO, s.Crypto, s.Directions = []string{"tcp"}, []int{64 << 10}, []int{1500}, []bool{true}, []bool{false}, []matrix.Direction{matrix.Up}
	s.Warmup, s.Time = 100*time.Millisecond, 500*time.Millisecond
	cells := s.Cells()
	if len(cells) != 1 {
		t.Fatalf("%d cells, want 1", len(cells))
	}
	c := cells[0]
	env := &mode.Env{Spec: &s, Client: tp.ClientDevice(), Server: side.Local{T: tp, CPU: -1}, Topology: tp}
	m := Mode{mode.Common{Mode: Name}}
	if st, note := m.Check(env, c); st != "" {
		t.Fatalf("%s: %s %s", c.Key(), st, note)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	smp, err := m.Sample(ctx, env, c, 0)
	if err != nil {
		t.Fatalf("%s: %v", c.Key(), err)
	}
	t.Logf("%s: %d bytes in %.3f s, %.0f Mbit/s, %.2f cores busy", c.Key(), smp.Bytes, smp.Seconds, smp.Bps/1e6, smp.CPU.BusyCores)
	if smp.Bytes < 64<<10 || smp.Streams != 2 || smp.Warmup != s.Warmup.Seconds() || smp.Finished.IsZero() {
		t.Errorf("sample %+v: want at least a message, 2 streams, the warm-up", smp)
	}
	// The window, by the receiver's clock: about Time.
	if smp.Seconds < 0.8*s.Time.Seconds() || smp.Seconds > 5*s.Time.Seconds() {
		t.Errorf("measured over %.3f s, want about %v", smp.Seconds, s.Time)
	}
	if want := float64(smp.Bytes) * 8 / smp.Seconds; math.Abs(smp.Bps-want) > 1e-6*want {
		t.Errorf("goodput %.0f bit/s, but %d bytes in %.3f s is %.0f", smp.Bps, smp.Bytes, smp.Seconds, want)
	}
	if smp.CPU.BusyCores <= 0 && smp.CPUUnavailable == "" {
		t.Errorf("no CPU time and no reason: %+v", smp.CPU)
	}
	r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK, Samples: []results.Sample{smp}}
	r.Summarize()
	if sum := m.Summary(&r); !strings.Contains(sum, "Mbit/s (median of 1") {
		t.Errorf("summary %q", sum)
	}
}
