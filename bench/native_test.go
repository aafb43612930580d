//go:build linux

package bench_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/bulk/conns"
	"kquic.dev/bench/mode/native"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// TestNativeMatrix runs kquic and tcp with both drivers at one size: the
// module's perf_test and iperf3 beside the Go bindings on the same veth
// pair, with the counters. Needs the module and $KQUIC_PERF_TEST.
func TestNativeMatrix(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth, kmod.FeatureQUIC)
	testenv.Tool(t, "iperf3", "iperf3")
	pt := os.Getenv(native.PerfTestEnv)
	if pt == "" {
		t.Skipf("needs the module's built perf_test: $%s=/path/perf_test", native.PerfTestEnv)
	}
	t.Setenv(native.IperfQUICEnv, "") // perf_test, not the iperf fork (TestNativeIperfQUIC)
	spec := shortSpec("kquic", "tcp")
	spec.Sizes, spec.GSO, spec.Repeat = []int{4 << 10}, []bool{true}, 2
	spec.Time, spec.Warmup = time.Second, 300*time.Millisecond
	spec.Drivers = []matrix.Driver{matrix.DriverGo, native.Name}
	if runtime.NumCPU() >= 2 {
		spec.Affinity = &matrix.Affinity{Client: 0, Server: 1}
	}
	r := &bench.Runner{Spec: spec, Explain: true, DriverOptions: map[matrix.Driver]any{native.Name: &native.Tools{PerfTest: pt}}}
	doc, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	natives := 0
	for _, c := range doc.Cells {
		if c.Driver != native.Name {
			continue
		}
		if c.Transport == "tcp" && c.Crypto {
			if c.Status != results.StatusNA {
				t.Errorf("%s: %s, want n/a (plain TCP has no encryption)", c.Key, c.Status)
			}
			continue
		}
		natives++
		if c.Status != results.StatusOK {
			t.Errorf("%s: %s %s %s", c.Key, c.Status, c.Note, c.Error)
			continue
		}
		if len(c.Samples) != spec.Repeat {
			t.Errorf("%s: %d samples, want %d", c.Key, len(c.Samples), spec.Repeat)
		}
		for _, s := range c.Samples {
			// Plausible on a TCG guest and on hardware alike.
			if s.Bps < 1e6 || s.Bps > 400e9 {
				t.Errorf("%s: %.0f bit/s", c.Key, s.Bps)
			}
			if got := float64(s.Bytes) * 8 / s.Seconds; got != s.Bps {
				t.Errorf("%s: %d bytes in %g s is %.0f bit/s, the sample says %.0f", c.Key, s.Bytes, s.Seconds, got, s.Bps)
			}
			// The measured run lasts at least about --time: perf_test's
			// total is sized from the fastest rate seen (a slower run
			// lasts longer), iperf3 takes whole seconds.
			if s.Seconds < 0.5 || s.Seconds > 20 {
				t.Errorf("%s: the measured run lasted %g s, want about 1", c.Key, s.Seconds)
			}
			if s.CPU.BusyCores <= 0 {
				t.Errorf("%s: no CPU time in the window: %+v", c.Key, s.CPU)
			}
			mb := float64(s.Bytes) / 1e6
			tx, rx := s.Counters["client.tx_packets"]/mb, s.Counters["server.rx_packets"]/mb
			// At least one packet per 64 KiB super-packet, at most one per
			// 100 bytes of payload.
			if tx < 15 || tx > 1e4 || rx < 15 || rx > 1e4 {
				t.Errorf("%s: %.0f packets sent and %.0f received per MB (counters %v, missing %v)", c.Key, tx, rx, s.Counters, s.CountersMissing)
			}
			if !slicesContainsPrefix(s.CountersMissing, "syscalls:") {
				t.Errorf("%s: the missing syscalls are not said: %v", c.Key, s.CountersMissing)
			}
		}
	}
	if natives != 3 { // kquic crypto on and off, tcp crypto off
		t.Errorf("%d measurable native cells, want 3", natives)
	}
	var tables bytes.Buffer
	render.WriteTables(&tables, doc)
	// The kernel's kquic figure first, as kquic; tcp's Go column first.
	if !strings.Contains(tables.String(), "kquic | kquic(Go)") || !strings.Contains(tables.String(), "tcp | tcp(C)") || !strings.Contains(tables.String(), "kquic: perf_test -x") {
		t.Errorf("the tables do not set the native columns beside the Go ones:\n%s", tables.String())
	}
	t.Logf("\n%s", tables.String())
}

// TestNativeIperfQUIC measures kquic(C) with the module author's iperf3
// fork where perf_test cannot (16 and 64 KiB messages), encrypted and not,
// beside the Go bindings: every native cell is the fork's measurement, and
// the unencrypted table says how the fork ran. Needs the module and
// $KQUIC_IPERF (required where $KQUIC_REQUIRE lists iperf-quic).
func TestNativeIperfQUIC(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth, kmod.FeatureQUIC)
	fork := os.Getenv(native.IperfQUICEnv)
	if fork == "" {
		if testenv.Required("iperf-quic") {
			t.Fatalf("$%s names no iperf fork, and $%s requires it", native.IperfQUICEnv, testenv.RequireEnv)
		}
		t.Skipf("needs the module author's iperf3 fork built against libquic: $%s=/path/iperf3", native.IperfQUICEnv)
	}
	spec := shortSpec("kquic")
	spec.Sizes, spec.GSO, spec.Repeat = []int{16 << 10, 64 << 10}, []bool{true}, 1
	spec.Time, spec.Warmup = time.Second, 0
	spec.Drivers = []matrix.Driver{matrix.DriverGo, native.Name}
	r := &bench.Runner{Spec: spec, DriverOptions: map[matrix.Driver]any{native.Name: &native.Tools{IperfQUIC: fork, PerfTest: "/nonexistent/perf_test"}}}
	doc, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range doc.Cells {
		if c.Driver != native.Name {
			continue
		}
		n++
		if c.Status != results.StatusOK {
			t.Errorf("%s: %s %s %s", c.Key, c.Status, c.Note, c.Error)
			continue
		}
		for _, s := range c.Samples {
			if s.Tool != native.ToolIperfQUIC {
				t.Errorf("%s: measured by %q, want the fork", c.Key, s.Tool)
			}
			if s.Bps < 1e6 || s.Bps > 400e9 || s.Seconds < 0.5 || s.Seconds > 20 {
				t.Errorf("%s: %.0f bit/s over %g s", c.Key, s.Bps, s.Seconds)
			}
			if s.CPU.BusyCores <= 0 {
				t.Errorf("%s: no CPU time in the window: %+v", c.Key, s.CPU)
			}
		}
	}
	if n != 4 { // 16 and 64 KiB, encrypted and not
		t.Errorf("%d native cells, want 4", n)
	}
	var tables bytes.Buffer
	render.WriteTables(&tables, doc)
	if !strings.Contains(tables.String(), "kquic: "+native.ToolIperfQUIC+" --no-cryption") || !strings.Contains(tables.String(), "each cell kquic | kquic(Go)") {
		t.Errorf("the unencrypted table does not say the fork ran with --no-cryption:\n%s", tables.String())
	}
	t.Logf("\n%s", tables.String())
}

// TestNativeMissingTools: a native cell whose tool is missing says n/a with
// the reason and the fix, and takes no time in the progress; so does ktls
// where openssl has no -ktls.
func TestNativeMissingTools(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth)
	t.Setenv(native.IperfQUICEnv, "") // perf_test measures kquic here
	spec := shortSpec("tcp", "ktls")
	spec.Sizes, spec.GSO, spec.Repeat = []int{1 << 10, 16 << 10}, []bool{true}, 2
	spec.Transports = append(spec.Transports, "kquic")
	run := func(drivers ...matrix.Driver) (doc *results.Document, done, total int) {
		spec.Drivers = drivers
		r := &bench.Runner{Spec: spec, DriverOptions: map[matrix.Driver]any{native.Name: &native.Tools{PerfTest: "/nonexistent/perf_test", Iperf3: "/nonexistent/iperf3"}},
			Progress: func(d, tot int, _ matrix.Cell) { done, total = d, tot }}
		doc, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return doc, done, total
	}
	// A sample set aside for steal is one window more in the progress;
	// the machine decides how many there are in each run.
	planned := func(doc *results.Document, done, total int) (int, int) {
		for _, c := range doc.Cells {
			done -= len(c.Disturbed)
			total -= len(c.Disturbed)
		}
		return done, total
	}
	goDone, goTotal := planned(run())
	doc, done, total := run(matrix.DriverGo, native.Name)
	done, total = planned(doc, done, total)
	// The native cells, all n/a, add nothing to the work.
	if done != goDone || total != goTotal {
		t.Errorf("with the native cells the progress ended at %d of %d, without them at %d of %d (the samples taken again for steal left out)", done, total, goDone, goTotal)
	}
	want := map[string]string{"kquic": "--perf-test", "tcp": "apt-get install iperf3"}
	help, _ := exec.Command("openssl", "s_server", "-help").CombinedOutput()
	if !native.OpenSSLHasKTLS(help) {
		want["ktls"] = "no kTLS"
	}
	for _, c := range doc.Cells {
		if c.Driver != native.Name {
			continue
		}
		fix, ok := want[c.Transport]
		if !ok || (c.Transport == "tcp" && c.Crypto) || (c.Transport == "ktls" && !c.Crypto) {
			continue
		}
		if c.Transport == "kquic" && c.Size > 4<<10 {
			fix = "--iperf-quic" // beyond perf_test's messages: how to get the fork
		}
		if c.Status != results.StatusNA || !strings.Contains(c.Note, fix) {
			t.Errorf("%s: %s %q, want n/a naming %q", c.Key, c.Status, c.Note, fix)
		}
	}
	var tables bytes.Buffer
	render.WriteTables(&tables, doc)
	if !strings.Contains(tables.String(), "n/a   kquic(C): native: perf_test /nonexistent/perf_test") {
		t.Errorf("the notes do not say why kquic(C) is n/a:\n%s", tables.String())
	}
}

func slicesContainsPrefix(ss []string, p string) bool {
	for _, s := range ss {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// TestNativeConns runs the native tools' cells of one and four
// connections (--conns 1,4): iperf3 -P 4 for tcp, and for kquic with the
// module the iperf fork -P 4 where $KQUIC_IPERF names it; perf_test,
// which serves one connection at a time, is n/a for four with that
// reason. Each measured cell's connections add up to its bytes.
func TestNativeConns(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth)
	testenv.Tool(t, "iperf3", "iperf3")
	transports := []string{"tcp"}
	if kmod.Probe(kmod.FeatureQUIC) == nil {
		transports = append(transports, "kquic")
	}
	fork := os.Getenv(native.IperfQUICEnv)
	spec := shortSpec(transports...)
	spec.Sizes, spec.GSO, spec.Crypto, spec.Repeat = []int{4 << 10}, []bool{true}, []bool{false}, 1 // perf_test's largest
	spec.Time, spec.Warmup = time.Second, 0
	spec.Drivers = []matrix.Driver{native.Name}
	spec.Conns = []int{1, 4}
	r := &bench.Runner{Spec: spec, DriverOptions: map[matrix.Driver]any{native.Name: &native.Tools{IperfQUIC: fork, PerfTest: "/nonexistent/perf_test"}}}
	doc, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	measured := 0
	for _, c := range doc.Cells {
		t.Logf("%s: %s %s %.0f Mbit/s", c.Key, c.Status, c.Note, c.MedianBps/1e6)
		if c.Transport == "kquic" && fork == "" {
			if c.Conns == 4 && (c.Status != results.StatusNA || !strings.Contains(c.Note, "one connection at a time")) {
				t.Errorf("%s: %s %q, want n/a: perf_test serves one connection at a time", c.Key, c.Status, c.Note)
			}
			continue
		}
		if c.Status != results.StatusOK {
			t.Errorf("%s: %s %s %s", c.Key, c.Status, c.Note, c.Error)
			continue
		}
		measured++
		s := conns.SampleOf(&c.Samples[0])
		if s == nil || len(s.Conns) != c.Conns {
			t.Fatalf("%s: figures of the connections %+v, want %d", c.Key, s, c.Conns)
		}
		var total int64
		for i, k := range s.Conns {
			if k.Bytes <= 0 {
				t.Errorf("%s: connection %d moved nothing", c.Key, i)
			}
			total += k.Bytes
		}
		if total != c.Samples[0].Bytes {
			t.Errorf("%s: the connections' bytes add up to %d, the sample has %d", c.Key, total, c.Samples[0].Bytes)
		}
	}
	if measured < 2 {
		t.Errorf("%d native cells measured, want tcp's two at least", measured)
	}
}
