//go:build linux

package perfveth_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench/perftest"
	"kquic.dev/bench/perfveth"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// CPerfTestEnv names the variable that points the tests at the module's
// built tests/perf_test (or a script that runs it).
const CPerfTestEnv = "KQUIC_PERF_TEST"

// TestCompareVeth runs the C tool's and kqbench's pairings and the matrix
// cell across a veth pair (servers and clients in two namespaces): each
// contender moves data and reports a throughput.
func TestCompareVeth(t *testing.T) {
	testenv.Require(t, kmod.FeatureQUIC, kmod.FeatureVeth)
	testenv.Root(t)
	cPerf := os.Getenv(CPerfTestEnv)
	if cPerf == "" {
		if testenv.Required("perftest") {
			t.Fatalf("needs the module's built perf_test: $%s=/path/perf_test (this project ships none)", CPerfTestEnv)
		}
		t.Skipf("needs the module's built perf_test: $%s=/path/perf_test", CPerfTestEnv)
	}
	certs := filepath.Join("..", "..", "testdata", "certs")
	o := perftest.CompareOptions{
		CPerfTest: cPerf, Kqbench: testenv.Kqbench(t),
		Cert: filepath.Join(certs, "server.pem"), Key: filepath.Join(certs, "server-key.pem"),
		CA: filepath.Join(certs, "ca.pem"), ServerName: "localhost",
		Sizes: []int{4096}, Runs: 1, Total: 4 << 20, Port: 9400, Timeout: 2 * time.Minute,
	}
	pair, err := perfveth.Use(&o, 1500, true, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer pair.Close()
	res, err := perftest.Compare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range perftest.Pairings {
		if v := res.Runs[4096][p]; len(v) != 1 || v[0] <= 0 {
			t.Errorf("%v: %v", p, v)
		}
	}
	// Each run's cost: the client process's (it ran, so it used CPU) and
	// the server's during the run (it waited for the data at least once).
	for _, p := range perftest.Pairings {
		c := res.Costs[4096][p]
		if len(c) != 1 || c[0].Client.CPU <= 0 || !c[0].ServerOK || c[0].Server.Voluntary <= 0 {
			t.Errorf("%v: costs %+v, want one run's, with the client's CPU time and the server's waits", p, c)
		}
	}
	var costs strings.Builder
	res.WriteCosts(&costs)
	t.Log("\n" + costs.String())
	if v := res.Extra[4096][perfveth.MatrixCell]; len(v) != 1 || v[0] <= 0 {
		t.Errorf("%s: %v", perfveth.MatrixCell, v)
	}
	t.Logf("%+v %+v", res.Runs, res.Extra)
}
