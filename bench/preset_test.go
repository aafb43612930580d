//go:build linux

package bench_test

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/native"
	"kquic.dev/bench/ratio"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// TestPresetLxinReadme runs the module README's tables (native.LxinReadme)
// with the module author's iperf3 fork, at short samples: every cell of
// both tables is measured, kquic(C) by the fork at every size; a cell's
// ratio to itself is 1; and a second run of the same build moves no more of
// the README's ratios than chance would. Needs the module, kTLS and
// $KQUIC_IPERF (required where $KQUIC_REQUIRE lists iperf-quic).
func TestPresetLxinReadme(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth, kmod.FeatureQUIC, kmod.FeatureTLS)
	testenv.Tool(t, "iperf3", "iperf3")
	fork := os.Getenv(native.IperfQUICEnv)
	if fork == "" {
		if testenv.Required("iperf-quic") {
			t.Fatalf("$%s names no iperf fork, and $%s requires it", native.IperfQUICEnv, testenv.RequireEnv)
		}
		t.Skipf("needs the module author's iperf3 fork built against libquic: $%s=/path/iperf3", native.IperfQUICEnv)
	}
	run := func(spec matrix.Spec) *results.Document {
		t.Helper()
		spec.Time, spec.Warmup, spec.Repeat, spec.MaxRepeat = 200*time.Millisecond, 0, 2, 0 // the fork: 1 s
		spec.ReadSize = matrix.ReadMessage                                                  // as iperf3 -l reads
		r := &bench.Runner{Spec: spec, DriverOptions: map[matrix.Driver]any{native.Name: &native.Tools{IperfQUIC: fork}}}
		doc, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	spec := matrix.DefaultSpec()
	native.LxinReadme.Apply(&spec)
	doc := run(spec)

	// Both tables: kquic against ktls encrypted, kquic against tcp not;
	// every cell of each measured, by both drivers. (tcp encrypted is
	// ktls, ktls unencrypted is tcp: those cells are n/a.)
	inTables := func(c results.CellResult) bool {
		return c.Transport == "kquic" || (c.Transport == "ktls") == c.Crypto
	}
	help, _ := exec.Command("openssl", "s_server", "-help").CombinedOutput()
	opensslKTLS := native.OpenSSLHasKTLS(help) // Debian's OpenSSL is built without
	var cells, fork16 int
	for _, c := range doc.Cells {
		if c.Transport == "ktls" && c.Driver == native.Name && c.Crypto && !opensslKTLS {
			if c.Status != results.StatusNA || !strings.Contains(c.Note, "no kTLS") {
				t.Errorf("%s: %s %q, want n/a: this openssl has no kTLS", c.Key, c.Status, c.Note)
			}
			cells++
			continue
		}
		if !inTables(c) {
			if c.Status != results.StatusNA {
				t.Errorf("%s: %s, want n/a (not a cell of the README's tables)", c.Key, c.Status)
			}
			continue
		}
		cells++
		if c.Status != results.StatusOK || len(c.Samples) != 2 {
			t.Errorf("%s: %s with %d samples: %s %s", c.Key, c.Status, len(c.Samples), c.Note, c.Error)
			continue
		}
		if c.Transport == "kquic" && c.Driver == native.Name {
			for _, s := range c.Samples {
				if s.Tool != native.ToolIperfQUIC {
					t.Errorf("%s: measured by %q, want the fork", c.Key, s.Tool)
				}
			}
			if c.Size >= 16<<10 {
				fork16++
			}
		}
		// A cell's ratio to itself.
		var bps []float64
		for _, s := range c.Samples {
			bps = append(bps, s.Bps)
		}
		if self, err := ratio.Of(bps, bps); err != nil || self.Center != 1 || !self.Contains(1) {
			t.Errorf("%s: its ratio to itself is %+v (%v), want 1 within its interval", c.Key, self, err)
		}
	}
	// kquic, ktls, tcp in their tables: 4 sizes, 2 MTUs, GSO on and off,
	// 2 drivers; kquic twice (encrypted and not).
	if want := 4 * 4 * 2 * 2 * 2; cells != want {
		t.Errorf("%d cells in the tables, want %d", cells, want)
	}
	if fork16 != 2*2*2*2 { // 16 and 64 KiB, 2 MTUs, GSO, encryption
		t.Errorf("%d kquic(C) cells at 16 and 64 KiB measured by the fork, want 16", fork16)
	}
	var tables bytes.Buffer
	render.WriteTables(&tables, doc)
	render.WriteRatios(&tables, doc)
	if !strings.Contains(tables.String(), "kquic / ktls") && !strings.Contains(tables.String(), "kquic(C) / ktls") {
		t.Errorf("no kquic / ktls ratio table:\n%s", tables.String())
	}
	t.Logf("\n%s", tables.String())

	// The same build again, at MTU 1500 and 64 KiB: every ratio the runs
	// share is compared. Each is a test at 5%, so some come out
	// "significant" by chance; more than the binomial tail allows (under
	// one in 10^4 for independent tests) says the comparison is broken.
	spec.MTUs, spec.Sizes = []int{1500}, []int{64 << 10}
	changes := render.RatioChanges(doc, run(spec), 0.05)
	sig := 0
	for _, c := range changes {
		if c.Significant {
			sig++
		}
	}
	if len(changes) != 6 { // 2 pair tables x GSO on and off, 2 GSO tables
		t.Errorf("%d ratios compared between the two runs, want 6", len(changes))
	}
	if limit := binomialLimit(len(changes), 0.05, 1e-4); sig > limit {
		t.Errorf("%d of %d ratios moved between two runs of one build (chance allows %d):\n%v", sig, len(changes), limit, changes)
	}
}

// binomialLimit is the largest k with P(X >= k+1) >= tail for X ~ B(n, p):
// more than k successes happen by chance less often than tail.
func binomialLimit(n int, p, tail float64) int {
	for k := 0; k <= n; k++ {
		q := 0.0 // P(X > k)
		for j := k + 1; j <= n; j++ {
			lg, _ := math.Lgamma(float64(n + 1))
			l1, _ := math.Lgamma(float64(j + 1))
			l2, _ := math.Lgamma(float64(n - j + 1))
			q += math.Exp(lg - l1 - l2 + float64(j)*math.Log(p) + float64(n-j)*math.Log1p(-p))
		}
		if q < tail {
			return k
		}
	}
	return n
}
