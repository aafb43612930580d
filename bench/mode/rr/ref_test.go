//go:build linux

package rr

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/perftest"
	"kquic.dev/bench/side"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// rrRef is a reference tool's TCP ping-pong: it returns the mean and median
// round trip of one run of dur with size-byte messages each way.
type rrRef struct {
	name string
	run  func(t *topo.Topology, size int, dur time.Duration) (mean, p50 time.Duration, err error)
}

// BenchmarkRRAgainstSockperfQperf measures the round trip of kqbench's rr
// mode over plain TCP (one connection, one request in flight) and of the two
// Debian reference tools doing the same on the same veth pair: sockperf
// ping-pong (--tcp --full-rtt) and qperf tcp_lat (whose one-way latency is
// half its round trip; doubled here). The tools run interleaved, the order
// rotating each round, so that a drift of the machine falls on all alike.
// It logs every run and reports each tool's mean round trip (the mean over
// the rounds of each run's mean) and kqbench's ratio to each.
//
//	go test -run '^$' -bench RRAgainstSockperfQperf -benchtime 1x ./bench/  (as root, in the guest)
//
// $KQBENCH_RR_ROUNDS (default 6), $KQBENCH_RR_TIME (default 3s) and
// $KQBENCH_RR_SIZE (default 64 bytes each way) change the run.
func BenchmarkRRAgainstSockperfQperf(b *testing.B) {
	testenv.Root(b)
	testenv.Require(b, kmod.FeatureVeth)
	sockperf := testenv.Tool(b, "sockperf", "sockperf")
	qperf := testenv.Tool(b, "qperf", "qperf")
	rounds, dur, size := 6, 3*time.Second, 64
	if v, err := strconv.Atoi(os.Getenv("KQBENCH_RR_ROUNDS")); err == nil {
		rounds = v
	}
	if v, err := time.ParseDuration(os.Getenv("KQBENCH_RR_TIME")); err == nil {
		dur = v
	}
	if v, err := strconv.Atoi(os.Getenv("KQBENCH_RR_SIZE")); err == nil {
		size = v
	}
	if size < 14 {
		b.Fatalf("KQBENCH_RR_SIZE %d: sockperf takes messages of 14 bytes or more", size)
	}
	t, err := topo.NewPrepared(1500, true)
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close()
	stop, err := startRefServers(t, sockperf, qperf)
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	tools := []rrRef{
		{"kqbench", kqbenchRR},
		{"sockperf", func(t *topo.Topology, size int, dur time.Duration) (time.Duration, time.Duration, error) {
			return sockperfRR(t, sockperf, size, dur)
		}},
		{"qperf", func(t *topo.Topology, size int, dur time.Duration) (time.Duration, time.Duration, error) {
			return qperfRR(t, qperf, size, dur)
		}},
	}
	means := map[string][]float64{}
	medians := map[string][]float64{}
	for i := 0; i < b.N; i++ {
		for round := 0; round < rounds; round++ {
			for k := range tools {
				tool := tools[(k+round)%len(tools)]
				mean, p50, err := tool.run(t, size, dur)
				if err != nil {
					b.Fatalf("%s: %v", tool.name, err)
				}
				b.Logf("round %d %-8s mean %7.1f µs  p50 %7.1f µs", round+1, tool.name, us(mean), us(p50))
				means[tool.name] = append(means[tool.name], us(mean))
				medians[tool.name] = append(medians[tool.name], us(p50))
			}
		}
	}
	var lines []string
	for _, tool := range tools {
		m, p := perftest.Summarize(means[tool.name]), perftest.Summarize(medians[tool.name])
		b.ReportMetric(m.Mean, tool.name+"-mean-µs")
		lines = append(lines, fmt.Sprintf("%-8s round trip: mean %.1f µs (sd %.1f over %d runs, quietest run %.1f), p50 %.1f µs (sd %.1f)",
			tool.name, m.Mean, m.SD, m.N, slices.Min(means[tool.name]), p.Mean, p.SD))
	}
	k := perftest.Summarize(means["kqbench"]).Mean
	for _, ref := range []string{"sockperf", "qperf"} {
		r := k / perftest.Summarize(means[ref]).Mean
		b.ReportMetric(r, "ratio-to-"+ref)
		lines = append(lines, fmt.Sprintf("kqbench / %s: %.3f", ref, r))
	}
	b.Logf("%d-byte messages each way, %d rounds of %v:\n%s", size, rounds, dur, strings.Join(lines, "\n"))
}

const (
	sockperfPort = 11111
	qperfPort    = 19765
)

// startRefServers starts sockperf's and qperf's servers in the server
// namespace.
func startRefServers(t *topo.Topology, sockperf, qperf string) (func(), error) {
	var cmds []*exec.Cmd
	stop := func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	}
	err := t.Server.Do(func() error {
		for _, c := range []*exec.Cmd{
			exec.Command(sockperf, "server", "--tcp", "-i", topo.ServerAddr.String(), "-p", strconv.Itoa(sockperfPort)),
			exec.Command(qperf, "-lp", strconv.Itoa(qperfPort)),
		} {
			if err := c.Start(); err != nil { // forked from this thread: inside the namespace
				return err
			}
			cmds = append(cmds, c)
		}
		return nil
	})
	if err != nil {
		stop()
		return nil, err
	}
	time.Sleep(500 * time.Millisecond) // until they listen
	return stop, nil
}

// kqbenchRR is one sample of the matrix's rr mode over tcp.
func kqbenchRR(t *topo.Topology, size int, dur time.Duration) (time.Duration, time.Duration, error) {
	tcp, _ := transport.Get("tcp")
	c := matrix.Cell{Transport: "tcp", Size: size, MTU: 1500, GSO: true, Direction: Direction, Streams: 1, Mode: Name, ReqSize: size, Conns: 1}
	s, err := Measure(context.Background(), t.ClientDevice(), side.Local{T: t, CPU: -1}, tcp, c, transport.Options{GSO: true}, 500*time.Millisecond, dur, nil)
	if err != nil {
		return 0, 0, err
	}
	return SampleOf(&s).Latency.Mean, SampleOf(&s).Latency.P50, nil
}

func runIn(t *topo.Topology, name string, args ...string) ([]byte, error) {
	var out []byte
	err := t.Client.Do(func() error {
		var err error
		out, err = exec.Command(name, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return nil
	})
	return out, err
}

var (
	sockperfAvgRE = regexp.MustCompile(`avg-rtt=([0-9.]+)`)
	sockperfP50RE = regexp.MustCompile(`percentile 50\.000 =\s*([0-9.]+)`)
	qperfLatRE    = regexp.MustCompile(`latency\s*=\s*([0-9.]+)\s*(ns|us|ms|sec)`)
)

// sockperfRR runs sockperf's ping-pong client; --full-rtt prints round
// trips in µs.
func sockperfRR(t *topo.Topology, bin string, size int, dur time.Duration) (time.Duration, time.Duration, error) {
	out, err := runIn(t, bin, "ping-pong", "--tcp", "--full-rtt", "-i", topo.ServerAddr.String(), "-p", strconv.Itoa(sockperfPort),
		"-m", strconv.Itoa(size), "-t", strconv.Itoa(int(math.Ceil(dur.Seconds()))))
	if err != nil {
		return 0, 0, err
	}
	a, p := sockperfAvgRE.FindSubmatch(out), sockperfP50RE.FindSubmatch(out)
	if a == nil || p == nil {
		return 0, 0, fmt.Errorf("no avg-rtt or median in sockperf's output:\n%s", out)
	}
	mean, _ := strconv.ParseFloat(string(a[1]), 64)
	p50, _ := strconv.ParseFloat(string(p[1]), 64)
	return time.Duration(mean * 1e3), time.Duration(p50 * 1e3), nil
}

// qperfRR runs qperf's tcp_lat, which prints the one-way latency: half the
// mean round trip. qperf gives no median; the mean stands for it.
func qperfRR(t *topo.Topology, bin string, size int, dur time.Duration) (time.Duration, time.Duration, error) {
	out, err := runIn(t, bin, topo.ServerAddr.String(), "-lp", strconv.Itoa(qperfPort), "-t", strconv.Itoa(int(math.Ceil(dur.Seconds()))),
		"-m", strconv.Itoa(size), "tcp_lat")
	if err != nil {
		return 0, 0, err
	}
	m := qperfLatRE.FindSubmatch(out)
	if m == nil {
		return 0, 0, fmt.Errorf("no latency in qperf's output:\n%s", out)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	unit := map[string]float64{"ns": 1, "us": 1e3, "ms": 1e6, "sec": 1e9}[string(m[2])]
	rtt := time.Duration(2 * v * unit)
	return rtt, rtt, nil
}
