//go:build linux

package bulk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"

	"kquic.dev/bench/host"
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
// iperf3 side by side on the same veth pair with the same message size and
// the matrix's pinning (client CPU 0, server CPU 1, --affinity auto), and
// reports the ratio: kqbench's own cost must not be what it measures. Each
// round measures kqbench's pumps twice, through Go's poller (the default)
// and with blocking system calls on the socket ($KQBENCH_SOCKET_PUMPS, see
// bench/side), and iperf3 between, so that drift falls on all three alike.
//
//	go test -run '^$' -bench TCPAgainstIperf3 -benchtime 1x ./bench/mode/bulk/
func BenchmarkTCPAgainstIperf3(b *testing.B) {
	testenv.Root(b)
	testenv.Require(b, kmod.FeatureVeth)
	iperf := testenv.Tool(b, "iperf3", "iperf3")
	if n := runtime.NumCPU(); n < 2 {
		b.Skipf("pinning the two ends needs 2 CPUs; this process may use %d", n)
	}
	t, err := topo.NewPrepared(1500, true)
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close()
	tcp, _ := transport.Get("tcp")
	aff := &matrix.Affinity{Client: 0, Server: 1}
	const dur = 3 * time.Second
	for _, size := range []int{1 << 10, 64 << 10} {
		b.Run(render.SizeName(size), func(b *testing.B) {
			var sock, poller, theirs []float64
			measure := func(socketPumps bool) float64 {
				if socketPumps {
					b.Setenv(side.SocketPumpsEnv, "1")
					defer os.Unsetenv(side.SocketPumpsEnv)
				}
				s, err := Measure(context.Background(), t.ClientDevice(), side.Local{T: t, CPU: aff.Server}, tcp, matrix.Cell{Transport: "tcp", Size: size, MTU: 1500, GSO: true, Direction: "up", Streams: 1},
					transport.Options{GSO: true, ReadSize: size}, aff, 500*time.Millisecond, dur, nil)
				if err != nil {
					b.Fatal(err)
				}
				return s.Bps
			}
			for i := 0; i < b.N; i++ {
				for round := 0; round < 5; round++ {
					poller = append(poller, measure(false))
					bps, err := iperf3(t, iperf, aff, size, dur)
					if err != nil {
						b.Fatal(err)
					}
					theirs = append(theirs, bps)
					sock = append(sock, measure(true))
				}
			}
			o, so, th := median(poller), median(sock), median(theirs)
			b.Logf("Mbit/s: kqbench %.0f %v, with socket pumps %.0f %v, iperf3 %.0f %v", o/1e6, mbits(poller), so/1e6, mbits(sock), th/1e6, mbits(theirs))
			b.ReportMetric(o/1e6, "kqbench-Mbit/s")
			b.ReportMetric(th/1e6, "iperf3-Mbit/s")
			b.ReportMetric(o/th, "ratio")
			b.ReportMetric(so/th, "socket-pumps-ratio")
		})
	}
}

func mbits(v []float64) []int {
	r := make([]int, len(v))
	for i, x := range v {
		r[i] = int(x / 1e6)
	}
	return r
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
func iperf3(t *topo.Topology, bin string, aff *matrix.Affinity, size int, dur time.Duration) (float64, error) {
	port := "5299"
	var srv *exec.Cmd
	if err := t.Server.Do(func() error {
		srv = exec.Command(bin, "-s", "-1", "-p", port, "-B", topo.ServerAddr.String())
		return host.StartPinned(srv, aff.ServerCPU()) // forked from this thread: inside the namespace
	}); err != nil {
		return 0, err
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	time.Sleep(300 * time.Millisecond)
	var buf bytes.Buffer
	cli := exec.Command(bin, "-c", topo.ServerAddr.String(), "-p", port, "-l", strconv.Itoa(size),
		"-t", fmt.Sprint(dur.Seconds()), "-O", "1", "-J")
	cli.Stdout = &buf
	err := t.Client.Do(func() error { return host.StartPinned(cli, aff.ClientCPU()) })
	if err == nil {
		err = cli.Wait()
	}
	out := buf.Bytes()
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
