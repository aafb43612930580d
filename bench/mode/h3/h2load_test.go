//go:build linux

package h3_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/h3"
	"kquic.dev/bench/ratio"
	"kquic.dev/bench/topo"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// h2loadRun is one setting of the comparison.
type h2loadRun struct {
	conns, streams, size, rounds int
	warmup, dur                  time.Duration
}

func h2loadRunFromEnv() h2loadRun {
	r := h2loadRun{conns: 4, streams: 10, size: 1024, rounds: 5, warmup: time.Second, dur: 5 * time.Second}
	for name, v := range map[string]*int{"KQBENCH_H2LOAD_CONNS": &r.conns, "KQBENCH_H2LOAD_STREAMS": &r.streams,
		"KQBENCH_H2LOAD_SIZE": &r.size, "KQBENCH_H2LOAD_ROUNDS": &r.rounds} {
		if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
			*v = n
		}
	}
	if d, err := time.ParseDuration(os.Getenv("KQBENCH_H2LOAD_TIME")); err == nil {
		r.dur = d
	}
	return r
}

var (
	h2loadFinished = regexp.MustCompile(`finished in [0-9.]+m?s, ([0-9.]+) req/s`)
	h2loadRequests = regexp.MustCompile(`requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout`)
)

// h2loadOnce serves the h2-tls row's handler as the mode does with the
// ends pinned (a server process on the server's CPU, in the server's
// namespace of a veth pair prepared as a cell's) and runs h2load against
// it on the client's CPU in the client's namespace: its requests per
// second, failing on any failed request.
func h2loadOnce(h2load string, a *matrix.Affinity, r h2loadRun) (float64, string, error) {
	tp, err := topo.NewPrepared(1500, true)
	if err != nil {
		return 0, "", err
	}
	defer tp.Close()
	ctx := context.Background()
	info, stop, err := h3.StartProcess(ctx, tp.Server.Do, a, h3.H2CryptoTLS, h3.Config{})
	if err != nil {
		return 0, "", err
	}
	url := fmt.Sprintf("https://%s/obj/%d", info.Addr, r.size)
	args := []string{"-c", strconv.Itoa(r.conns), "-m", strconv.Itoa(r.streams),
		fmt.Sprintf("--warm-up-time=%gs", r.warmup.Seconds()), "-D", fmt.Sprintf("%gs", r.dur.Seconds()), url}
	var out strings.Builder
	cmd := exec.Command(h2load, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err = tp.Client.Do(func() error {
		if err := host.StartPinned(cmd, a.Client); err != nil {
			return err
		}
		return cmd.Wait()
	})
	_, serr := stop(ctx)
	line := fmt.Sprintf("h2load %s (on CPU %d)", strings.Join(args, " "), a.Client)
	if err != nil || serr != nil {
		return 0, line, fmt.Errorf("%s: %v, the server: %v\n%s", line, err, serr, out.String())
	}
	m, q := h2loadFinished.FindStringSubmatch(out.String()), h2loadRequests.FindStringSubmatch(out.String())
	if m == nil || q == nil {
		return 0, line, fmt.Errorf("%s: no result in its output:\n%s", line, out.String())
	}
	if q[2] != "0" || q[3] != "0" || q[4] != "0" {
		return 0, line, fmt.Errorf("%s: requests failed: %s", line, q[0])
	}
	rps, err := strconv.ParseFloat(m[1], 64)
	return rps, line, err
}

// BenchmarkH2TLSAgainstH2load measures the mode's h2-tls row's objects
// cell (the engine's, over a veth pair, the ends pinned apart as
// --affinity auto does) and h2load (nghttp2-client) with the same
// connections, streams and object size against the same server on the
// same CPU, interleaved (the order alternating each round), and reports
// the median requests per second of each and their ratio (issue 24: the
// mode's row within 10% of the reference load generator's).
//
//	make h2load-compare
//
// $KQBENCH_H2LOAD_CONNS (4), _STREAMS (10), _SIZE (1024 bytes), _TIME
// (5s) and _ROUNDS (5) change the run.
func BenchmarkH2TLSAgainstH2load(b *testing.B) {
	h2load := testenv.Tool(b, "h2load", "nghttp2-client")
	testenv.Root(b)
	testenv.Require(b, kmod.FeatureVeth)
	a, err := matrix.ParseAffinity("auto")
	if err != nil || a == nil {
		b.Skipf("the comparison pins the two ends apart and needs two CPUs (%v)", err)
	}
	r := h2loadRunFromEnv()
	spec := matrix.Spec{Mode: h3.Name, Transports: []string{h3.H2CryptoTLS}, Sizes: []int{r.size}, MTUs: []int{1500},
		GSO: []bool{true}, Crypto: []bool{true}, Streams: r.streams, Conns: []int{r.conns}, Time: r.dur, Warmup: r.warmup,
		Repeat: 1, Affinity: a, Settings: &h3.WebSpec{Workloads: []string{h3.WorkloadObjects}, ObjectSize: r.size, Resources: 1, Rounds: 1}}
	tools := []struct {
		name string
		run  func() (float64, string, error)
	}{
		{"mode", func() (float64, string, error) {
			cells := runWeb(b, spec)
			c, ok := cells[h3.H2CryptoTLS+" "+h3.WorkloadObjects]
			if !ok || h3.SummaryOf(&c) == nil || len(c.Samples) != 1 || h3.SummaryOf(&c).Errors != 0 {
				return 0, "", fmt.Errorf("the mode's objects cell: %+v", c)
			}
			s := h3.SampleOf(&c.Samples[0])
			return float64(s.Requests) / s.Seconds, fmt.Sprintf("p50 %v, p99 %v; server %v", h3.SummaryOf(&c).Latency.P50, h3.SummaryOf(&c).Latency.P99, s.Server.Notes), nil
		}},
		{"h2load", func() (float64, string, error) { return h2loadOnce(h2load, a, r) }},
	}
	rps := map[string][]float64{}
	var line string
	for i := 0; i < b.N; i++ {
		for round := range r.rounds {
			for k := range tools {
				tool := tools[(k+round)%len(tools)]
				v, note, err := tool.run()
				if err != nil {
					b.Fatalf("%s: %v", tool.name, err)
				}
				if tool.name == "h2load" {
					line = note
				}
				rps[tool.name] = append(rps[tool.name], v)
				b.Logf("round %d %-6s %9.0f req/s (%s)", round+1, tool.name, v, note)
			}
		}
	}
	mode, ref := median(rps["mode"]), median(rps["h2load"])
	b.ReportMetric(mode, "mode-req/s")
	b.ReportMetric(ref, "h2load-req/s")
	b.ReportMetric(mode/ref, "ratio")
	if iv, err := ratio.Of(rps["mode"], rps["h2load"]); err == nil {
		b.Logf("the mode's over h2load's, ratio of the geometric means: %s", iv)
	}
	b.Logf("%d conns x %d streams, %d-byte objects, %v (after %v warm-up), %s, %d rounds interleaved: "+
		"the mode's h2-tls objects median %.0f req/s %v, h2load median %.0f req/s %v (%s), ratio %.3f",
		r.conns, r.streams, r.size, r.dur, r.warmup, a, r.rounds, mode, rps["mode"], ref, rps["h2load"], line, mode/ref)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
