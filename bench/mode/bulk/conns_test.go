//go:build linux

package bulk

import (
	"context"
	"kquic.dev/bench/mode/bulk/conns"
	"runtime"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// usableCPUs are the CPUs --affinity auto would pin to here.
func usableCPUs(t *testing.T) []int {
	a, err := matrix.ParseAffinity("auto")
	if err != nil {
		t.Fatal(err)
	}
	if a == nil {
		return nil
	}
	return a.Usable
}

// Cells of one and four connections of every transport that runs here
// (kquic with the module), up, over a veth pair, as kqbench matrix --conns
// 1,4 takes them: every connection moves bytes, the connections' bytes add
// up to the sample's, the fairness is Jain's index of their goodput, every
// CPU has its time split by kind, and where the connections are pinned
// (--affinity auto; in the guest with --cpus 4 one CPU per connection)
// their CPUs are busy.
func TestBulkConnsOverVeth(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth)
	tp, err := topo.NewPrepared(1500, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tp.Close() })
	cpus := usableCPUs(t)
	for _, name := range transport.Names() {
		t.Run(name, func(t *testing.T) {
			tr, _ := transport.Get(name)
			if err := tr.Available(); err != nil {
				if name == "kquic" {
					testenv.Require(t, kmod.FeatureQUIC)
				}
				t.Skipf("%s does not run here: %v", name, err)
			}
			for _, n := range []int{1, 4} {
				s := matrix.DefaultSpec()
				s.Transports, s.Sizes, s.MTUs, s.GSO, s.Directions = []string{name}, []int{64 << 10}, []int{1500}, []bool{true}, []matrix.Direction{matrix.Up}
				s.Crypto = []bool{name != "tcp"}
				s.Conns = []int{n}
				s.Warmup, s.Time = 200*time.Millisecond, time.Second
				s.Affinity = matrix.AutoAffinity(cpus)
				if n == 1 && len(cpus) >= 3 {
					// The sender on the last CPU, the receiver beside it:
					// away from CPU 0 and its housekeeping.
					s.Affinity = &matrix.Affinity{Client: cpus[len(cpus)-1], Server: cpus[len(cpus)-2]}
				}
				if _, err := s.Affinity.ForConns(n); err != nil {
					t.Logf("%d connections on %d CPUs: not pinned (%v)", n, len(cpus), err)
					s.Affinity = nil
				}
				if err := s.Validate(); err != nil {
					t.Fatal(err)
				}
				c := s.Cells()[0]
				if c.Conns != n {
					t.Fatalf("cell %s: %d connections, want %d", c.Key(), c.Conns, n)
				}
				env := &mode.Env{Spec: &s, Client: tp.ClientDevice(), Server: side.Local{T: tp, CPU: s.Affinity.ServerCPU()}, Topology: tp}
				m := Mode{mode.Common{Mode: Name}}
				if st, note := m.Check(env, c); st != "" {
					t.Fatalf("%s: %s %s", c.Key(), st, note)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				smp, err := m.Sample(ctx, env, c, 0)
				cancel()
				if err != nil {
					t.Fatalf("%s: %v", c.Key(), err)
				}
				checkConns(t, c, &s, smp)
			}
		})
	}
}

// checkConns checks a sample of cell c's n connections.
func checkConns(t *testing.T, c matrix.Cell, s *matrix.Spec, smp results.Sample) {
	t.Helper()
	n := c.Conns
	b := conns.SampleOf(&smp)
	if b == nil {
		t.Fatalf("%s: no bulk figures in the sample", c.Key())
	}
	var total int64
	var bps []float64
	for i, k := range b.Conns {
		t.Logf("%s: connection %d: %d bytes, %.0f Mbit/s, CPUs %d>%d", c.Key(), i, k.Bytes, k.Bps/1e6, k.ClientCPU, k.ServerCPU)
		if k.Bytes <= 0 {
			t.Errorf("%s: connection %d moved nothing", c.Key(), i)
		}
		total += k.Bytes
		bps = append(bps, k.Bps)
	}
	if len(b.Conns) != n {
		t.Fatalf("%s: %d connections in the figures, want %d", c.Key(), len(b.Conns), n)
	}
	if total != smp.Bytes {
		t.Errorf("%s: the connections' bytes add up to %d, the sample has %d", c.Key(), total, smp.Bytes)
	}
	var sum float64
	for _, v := range bps {
		sum += v
	}
	if d := sum - smp.Bps; d > 1e-6*smp.Bps || d < -1e-6*smp.Bps {
		t.Errorf("%s: the connections' goodput adds up to %.0f, the sample's is %.0f", c.Key(), sum, smp.Bps)
	}
	if f := results.JainIndex(bps); b.Fairness != f || f <= 0 || f > 1+1e-9 {
		t.Errorf("%s: fairness %v, Jain's index of %v is %v", c.Key(), b.Fairness, bps, f)
	}
	t.Logf("%s: %.0f Mbit/s, fairness %.3f, %.2f busy cores, %.0f Mbit/s per busy core; %s", c.Key(), smp.Bps/1e6, b.Fairness, b.BusyCores, b.BpsPerBusyCore/1e6, coresText(b.Cores))
	if smp.CPUUnavailable != "" {
		t.Logf("no CPU figures: %s", smp.CPUUnavailable)
		return
	}
	if len(b.Cores) != runtime.NumCPU() {
		t.Errorf("%s: %d cores in the figures, %d CPUs here", c.Key(), len(b.Cores), runtime.NumCPU())
	}
	if b.BusyCores <= 0 || b.BpsPerBusyCore != smp.Bps/b.BusyCores {
		t.Errorf("%s: %.2f busy cores, %.0f bit/s per busy core, goodput %.0f", c.Key(), b.BusyCores, b.BpsPerBusyCore, smp.Bps)
	}
	pairs, _ := s.Affinity.ForConns(n)
	if pairs == nil {
		return
	}
	pinned := map[int]bool{}
	for i, p := range pairs {
		if k := b.Conns[i]; k.ClientCPU != p.Client || k.ServerCPU != p.Server {
			t.Errorf("%s: connection %d on CPUs %d>%d, want %d>%d", c.Key(), i, k.ClientCPU, k.ServerCPU, p.Client, p.Server)
		}
		pinned[p.Client], pinned[p.Server] = true, true
	}
	if strings.HasPrefix(c.Transport, "quic-go") || len(pinned) == len(b.Cores) && n == 1 {
		// quic-go's own loops run where the runtime puts them; and with
		// every CPU pinned to one end there is no CPU to tell apart.
		return
	}
	// The two ends do most of the work: the sender its writes (and on a
	// veth pair the receive path of its packets, in softirq on its CPU),
	// the receiver its reads (and kTLS's decryption). Pinned, one of their
	// CPUs is the busiest, and the two carry more than the others together
	// (one connection); or every connection's CPU carries a share (four).
	busy := map[int]float64{}
	for _, k := range b.Cores {
		busy[k.CPU] = k.Busy
	}
	if n == 1 {
		var top int
		var in, out float64
		for cpu, v := range busy {
			if v > busy[top] {
				top = cpu
			}
			if pinned[cpu] {
				in += v
			} else {
				out += v
			}
		}
		if others := len(busy) - len(pinned); others > 0 && out/float64(others) >= 0.95 {
			// Every other CPU saturated too (a guest whose host is
			// loaded charges its emulated CPUs' waits as busy): the
			// shares tell the ends apart from nothing.
			t.Logf("%s: the CPUs no end is pinned to were %.0f%% busy on average: no share to compare", c.Key(), 100*out/float64(others))
			return
		}
		if !pinned[top] {
			t.Errorf("%s: the ends pinned to CPUs %d and %d, but CPU %d was the busiest: %s", c.Key(), pairs[0].Client, pairs[0].Server, top, coresText(b.Cores))
		}
		if in <= out {
			t.Errorf("%s: the ends' CPUs %d and %d were busy %.2f cores together, the others %.2f: %s", c.Key(), pairs[0].Client, pairs[0].Server, in, out, coresText(b.Cores))
		}
		return
	}
	for cpu := range pinned {
		if busy[cpu] < 0.25 {
			t.Errorf("%s: CPU %d, pinned to a connection, was busy %.0f%% of the window: %s", c.Key(), cpu, 100*busy[cpu], coresText(b.Cores))
		}
	}
}

// The spec side of --conns: the cells, their keys, the validation.
func TestBulkConnsCells(t *testing.T) {
	s := bulkSpec()
	plain := s.Cells()
	s.Conns = []int{1, 2, 4}
	s.Affinity = nil
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	cells := s.Cells()
	if len(cells) != 3*len(plain) {
		t.Fatalf("%d cells with three connection counts, want %d", len(cells), 3*len(plain))
	}
	seen := map[string]bool{}
	for i, c := range cells {
		if want := s.Conns[i%3]; c.Conns != want {
			t.Errorf("cell %d: %d connections, want %d (innermost axis)", i, c.Conns, want)
		}
		k := c.Key()
		if seen[k] {
			t.Errorf("key %s twice", k)
		}
		seen[k] = true
		base := c
		base.Conns = 0
		switch {
		case c.Conns == 1 && k != base.Key():
			t.Errorf("one connection's key %s differs from the plain cell's %s", k, base.Key())
		case c.Conns > 1 && k != base.Key()+"/conns="+string(rune('0'+c.Conns)):
			t.Errorf("key %s, want %s/conns=%d", k, base.Key(), c.Conns)
		}
	}
	// The affinity must pin every count, or the spec says how not to.
	s.Affinity = matrix.AutoAffinity([]int{0, 1, 2})
	err := s.Validate()
	if err == nil || !strings.Contains(err.Error(), "--conns 4 with --affinity auto") || !strings.Contains(err.Error(), "--affinity none") {
		t.Errorf("4 connections on 3 CPUs: %v", err)
	}
	if strings.Contains(err.Error(), "--conns 2 ") {
		t.Errorf("2 connections on 3 CPUs refused: %v", err)
	}
	bad := bulkSpec()
	bad.Conns = []int{0, 2, 2, 1001}
	err = bad.Validate()
	for _, want := range []string{"connections 0: must be 1..1000", "connections 2: given twice", "connections 1001"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("validation does not say %q: %v", want, err)
		}
	}
}
