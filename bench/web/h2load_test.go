//go:build linux

package web

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"kquic.dev/bench/topo"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// h2loadRun is one setting of the comparison.
type h2loadRun struct {
	conns, streams int
	size           int64
	warmup, dur    time.Duration
	rounds         int
}

func h2loadRunFromEnv() h2loadRun {
	r := h2loadRun{conns: 4, streams: 10, size: 1024, warmup: time.Second, dur: 5 * time.Second, rounds: 5}
	atoi := func(name string, v *int) {
		if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
			*v = n
		}
	}
	atoi("KQBENCH_H2LOAD_CONNS", &r.conns)
	atoi("KQBENCH_H2LOAD_STREAMS", &r.streams)
	atoi("KQBENCH_H2LOAD_ROUNDS", &r.rounds)
	if n, err := strconv.ParseInt(os.Getenv("KQBENCH_H2LOAD_SIZE"), 10, 64); err == nil {
		r.size = n
	}
	if d, err := time.ParseDuration(os.Getenv("KQBENCH_H2LOAD_TIME")); err == nil {
		r.dur = d
	}
	return r
}

var h2loadFinished = regexp.MustCompile(`finished in [0-9.]+m?s, ([0-9.]+) req/s`)
var h2loadRequests = regexp.MustCompile(`requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout`)

// runH2load runs h2load against url and returns its requests per second,
// failing on any failed request.
func runH2load(h2load, url string, r h2loadRun, do func(func() error) error) (float64, string, error) {
	args := []string{"-c", strconv.Itoa(r.conns), "-m", strconv.Itoa(r.streams),
		"--warm-up-time=" + fmt.Sprintf("%gs", r.warmup.Seconds()), "-D", fmt.Sprintf("%gs", r.dur.Seconds()), url}
	var out []byte
	err := do(func() (err error) {
		out, err = exec.Command(h2load, args...).CombinedOutput()
		return err
	})
	cmd := "h2load " + fmt.Sprint(args)
	if err != nil {
		return 0, cmd, fmt.Errorf("%s: %v\n%s", cmd, err, out)
	}
	m, q := h2loadFinished.FindSubmatch(out), h2loadRequests.FindSubmatch(out)
	if m == nil || q == nil {
		return 0, cmd, fmt.Errorf("%s: no result in its output:\n%s", cmd, out)
	}
	if string(q[2]) != "0" || string(q[3]) != "0" || string(q[4]) != "0" {
		return 0, cmd, fmt.Errorf("%s: requests failed: %s", cmd, q[0])
	}
	rps, _ := strconv.ParseFloat(string(m[1]), 64)
	return rps, cmd, nil
}

// BenchmarkObjectsAgainstH2load runs the Objects workload over HTTP/2 on
// crypto/tls and h2load (nghttp2-client) with the same connections and
// streams against the same ServeH2TLS server, interleaved (the order
// rotating each round), and reports the median requests per second of each
// and the ratio to h2load's; Objects runs both in the benchmark's process
// (beside the server, as kqbench runs a cell) and in a process of its own
// (as h2load does): on loopback, and over a veth pair between two
// network namespaces when run as root.
//
//	go test -run '^$' -bench ObjectsAgainstH2load -benchtime 1x ./bench/web/
//
// $KQBENCH_H2LOAD_CONNS (4), _STREAMS (10), _SIZE (1024 bytes), _TIME (5s)
// and _ROUNDS (5) change the run.
func BenchmarkObjectsAgainstH2load(b *testing.B) {
	h2load := testenv.Tool(b, "h2load", "nghttp2-client")
	run := h2loadRunFromEnv()
	b.Run("loopback", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		compareH2load(b, h2load, run, ln, Config{}, func(fn func() error) error { return fn() })
	})
	b.Run("veth", func(b *testing.B) {
		testenv.Root(b)
		testenv.Require(b, kmod.FeatureVeth)
		tp, err := topo.New()
		if err != nil {
			b.Fatal(err)
		}
		defer tp.Close()
		var ln net.Listener
		if err := tp.Server.Do(func() (err error) {
			ln, err = net.Listen("tcp", net.JoinHostPort(topo.ServerAddr.String(), "0"))
			return err
		}); err != nil {
			b.Fatal(err)
		}
		dial := func(ctx context.Context, network, addr string) (c net.Conn, err error) {
			err = tp.Client.Do(func() (err error) {
				c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
				return err
			})
			return c, err
		}
		compareH2load(b, h2load, run, ln, Config{DialTCP: dial}, tp.Client.Do)
	})
}

func compareH2load(b *testing.B, h2load string, run h2loadRun, ln net.Listener, cfg Config, inClient func(func() error) error) {
	stls, ctls := tlsConfigs(b)
	srv, err := ServeH2TLS(ln, NewHandler(), stls, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c, err := H2TLSClient(srv.URL(), ctls, cfg)
	if err != nil {
		b.Fatal(err)
	}
	url := fmt.Sprintf("%s/obj/%d", srv.URL(), run.size)
	o := ObjectsOptions{Conns: run.conns, Streams: run.streams, Size: run.size, Warmup: run.warmup, Duration: run.dur}
	tools := []struct {
		name string
		run  func() (float64, string, error)
	}{
		{"web.Objects", func() (float64, string, error) {
			r, err := Objects(context.Background(), c, o)
			if err == nil && r.Errors.Count != 0 {
				err = fmt.Errorf("%d requests failed: %s", r.Errors.Count, r.Errors)
			}
			return r.RequestsPerSecond(), fmt.Sprintf("p50 %v, p99 %v", r.Latency.P50, r.Latency.P99), err
		}},
		{"web.Objects-process", func() (float64, string, error) {
			r, err := runClientProcess(srv.URL(), o, inClient)
			if err == nil && r.Errors.Count != 0 {
				err = fmt.Errorf("%d requests failed: %s", r.Errors.Count, r.Errors)
			}
			return r.RequestsPerSecond(), fmt.Sprintf("p50 %v, p99 %v", r.Latency.P50, r.Latency.P99), err
		}},
		{"h2load", func() (float64, string, error) { return runH2load(h2load, url, run, inClient) }},
	}
	rps := map[string][]float64{}
	var cmd string
	for i := 0; i < b.N; i++ {
		for round := range run.rounds {
			for k := range tools {
				tool := tools[(k+round)%len(tools)]
				v, note, err := tool.run()
				if err != nil {
					b.Fatalf("%s: %v", tool.name, err)
				}
				if tool.name == "h2load" {
					cmd = note
				}
				rps[tool.name] = append(rps[tool.name], v)
				b.Logf("round %d %-20s %9.0f req/s (%s)", round+1, tool.name, v, note)
			}
		}
	}
	mt := median(rps["h2load"])
	b.ReportMetric(mt, "h2load-req/s")
	b.Logf("%d conns x %d streams, %d-byte objects, %v (after %v warm-up), %d rounds interleaved; h2load median %.0f req/s (%s)",
		run.conns, run.streams, run.size, run.dur, run.warmup, run.rounds, mt, cmd)
	for _, tool := range tools[:2] {
		m := median(rps[tool.name])
		b.ReportMetric(m, tool.name+"-req/s")
		b.ReportMetric(m/mt, tool.name+"-ratio")
		b.Logf("%s median %.0f req/s, ratio to h2load %.3f", tool.name, m, m/mt)
	}
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
