//go:build linux

package bulk

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// BenchmarkTCPAgainstIperf3 measures kqbench's tcp transport and Debian's
// iperf3 side by side on the same veth pair with the same message size, and
// reports the ratio: kqbench's own cost must not be what it measures.
//
//	go test -run '^$' -bench TCPAgainstIperf3 -benchtime 1x ./bench/
func BenchmarkTCPAgainstIperf3(b *testing.B) {
	testenv.Root(b)
	testenv.Require(b, kmod.FeatureVeth)
	iperf := testenv.Tool(b, "iperf3", "iperf3")
	t, err := topo.NewPrepared(1500, true)
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close()
	tcp, _ := transport.Get("tcp")
	const dur = 3 * time.Second
	for _, size := range []int{1 << 10, 64 << 10} {
		b.Run(render.SizeName(size), func(b *testing.B) {
			var ours, theirs []float64
			for i := 0; i < b.N; i++ {
				// Alternate, so drift affects both alike.
				for round := 0; round < 3; round++ {
					s, err := Measure(context.Background(), t.ClientDevice(), side.Local{T: t, CPU: -1}, tcp, matrix.Cell{Transport: "tcp", Size: size, MTU: 1500, GSO: true, Direction: "up", Streams: 1},
						transport.Options{GSO: true}, nil, 500*time.Millisecond, dur, nil)
					if err != nil {
						b.Fatal(err)
					}
					ours = append(ours, s.Bps)
					bps, err := iperf3(t, iperf, size, dur)
					if err != nil {
						b.Fatal(err)
					}
					theirs = append(theirs, bps)
				}
			}
			o, th := median(ours), median(theirs)
			b.ReportMetric(o/1e6, "kqbench-Mbit/s")
			b.ReportMetric(th/1e6, "iperf3-Mbit/s")
			b.ReportMetric(o/th, "ratio")
		})
	}
}

func median(v []float64) float64 {
	r := results.CellResult{}
	for _, x := range v {
		r.Samples = append(r.Samples, results.Sample{Bps: x})
	}
	r.Summarize()
	return r.MedianBps
}

// iperf3 runs an iperf3 server in the server namespace and a client in the
// client namespace, and returns the receiver's goodput.
func iperf3(t *topo.Topology, bin string, size int, dur time.Duration) (float64, error) {
	port := "5299"
	var srv *exec.Cmd
	if err := t.Server.Do(func() error {
		srv = exec.Command(bin, "-s", "-1", "-p", port, "-B", topo.ServerAddr.String())
		return srv.Start() // forked from this thread: inside the namespace
	}); err != nil {
		return 0, err
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	time.Sleep(300 * time.Millisecond)
	var out []byte
	var err error
	t.Client.Do(func() error {
		out, err = exec.Command(bin, "-c", topo.ServerAddr.String(), "-p", port, "-l", strconv.Itoa(size),
			"-t", fmt.Sprint(dur.Seconds()), "-O", "1", "-J").Output()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("iperf3 client: %w: %s", err, out)
	}
	var res struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return 0, fmt.Errorf("iperf3 output: %w", err)
	}
	return res.End.SumReceived.BitsPerSecond, nil
}
