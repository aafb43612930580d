//go:build linux

package native

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/results"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

// The ports the native tools' servers listen on, in the server namespace.
const (
	perfTestPort = 4450
	iperf3Port   = 5201
)

// perf_test's totals: at least 1 MiB (shorter runs time badly with its
// millisecond clock), at most its own limit of 1 GiB.
const (
	perfTestMinTotal = 1 << 20
	perfTestMaxTotal = 1<<30 - perfTestMaxMsg
)

// measurePerfTest runs the module's perf_test server in the server
// namespace and two clients in the client namespace: a warm-up run that
// lasts about Spec.Warmup, then the measured run, whose total is chosen to
// last about Spec.Time at the faster of the rates of the cell's last sample
// and of this warm-up (a run that meets a slower rate lasts longer; one
// that lasts under half of Spec.Time is run again with a total sized from
// it, up to twice). The sample is perf_test's own figure for the measured
// run: the bytes it sent over the time from its first sendmsg to the
// server's reply to the stream's FIN. The counters' window is the measured
// client's whole run, its handshake included.
func measurePerfTest(ctx context.Context, env *mode.Env, t *topo.Topology, c matrix.Cell, w *window) (results.Sample, error) {
	spec, tools := env.Spec, env.Tools
	if tools == nil {
		tools = &mode.Tools{}
	}
	pt := perfTest(tools)
	dir, err := os.MkdirTemp("", "kqbench-native-")
	if err != nil {
		return results.Sample{}, fmt.Errorf("native kquic: %w", err)
	}
	defer os.RemoveAll(dir)
	cert, key, err := writeCertificate(dir)
	if err != nil {
		return results.Sample{}, fmt.Errorf("native kquic: %w", err)
	}
	addr, port := topo.ServerAddr.String(), strconv.Itoa(perfTestPort)
	crypt := func(args []string) []string {
		if !c.Crypto {
			return append(args, "-x") // disable_1rtt_encryption, both ends
		}
		return args
	}
	defer w.Stop()
	var srvOut tailBuffer
	srv, err := startIn(ctx, t.ServerDevice(), spec.Affinity.ServerCPU(), &srvOut,
		crypt([]string{pt, "-l", "-a", addr, "-p", port, "--pkey", key, "--cert", cert})...)
	if err != nil {
		return results.Sample{}, fmt.Errorf("native kquic: perf_test server: %w", err)
	}
	defer stopProcess(srv)
	if err := t.ServerDevice().Do(func() error { return waitPort(ctx, "udp", perfTestPort, 10*time.Second) }); err != nil {
		return results.Sample{}, fmt.Errorf("native kquic: perf_test server (%s): %w; its output: %q", pt, err, srvOut.String())
	}
	run := func(total int64) (ToolFigure, error) {
		args := crypt([]string{pt, "-a", addr, "-p", port, "-m", strconv.Itoa(c.Size), "-t", strconv.FormatInt(total, 10)})
		var out tailBuffer
		cmd, err := startIn(ctx, t.ClientDevice(), spec.Affinity.ClientCPU(), &out, args...)
		if err != nil {
			return ToolFigure{}, fmt.Errorf("native kquic: perf_test client: %w", err)
		}
		if err := cmd.Wait(); err != nil {
			return ToolFigure{}, fmt.Errorf("native kquic: perf_test client (%s): %w: %q; the server's output: %q", strings.Join(args, " "), err, out.String(), srvOut.String())
		}
		f, err := ParsePerfTest(out.Bytes())
		if err != nil {
			return f, fmt.Errorf("native kquic: %w", err)
		}
		return f, nil
	}
	key0 := c.Key()
	rate := tools.Rate(key0)
	var warm ToolFigure
	if spec.Warmup > 0 || rate == 0 {
		total := int64(2 << 20)
		if rate > 0 {
			total = int64(rate * spec.Warmup.Seconds())
		}
		if warm, err = run(clampTotal(total)); err != nil {
			return results.Sample{}, err
		}
		// The faster of the two: perf_test's rate on a cell can vary
		// severalfold from run to run, and a total sized from a slow run
		// would time a fast one over a few milliseconds.
		rate = max(rate, float64(warm.Bytes)/warm.Seconds)
	}
	total := clampTotal(int64(rate * spec.Time.Seconds()))
	var f ToolFigure
	for attempt := 1; ; attempt++ {
		if f, err = w.measure(ctx, func() (ToolFigure, error) { return run(total) }); err != nil {
			return results.Sample{}, err
		}
		// A short run goes faster than a long one (the buffers absorb
		// its start), so a total sized from one can time a few tens of
		// milliseconds: then run again, sized from this run, at most
		// twice; the runs before the measured one warm it up.
		if f.Seconds >= spec.Time.Seconds()/2 || total == perfTestMaxTotal || attempt == 3 {
			break
		}
		warm.Seconds += f.Seconds
		w.Reset()
		total = clampTotal(int64(float64(f.Bytes) / f.Seconds * spec.Time.Seconds() * 1.2))
	}
	tools.SetRate(key0, float64(f.Bytes)/f.Seconds)
	return w.sample(f, spec.Affinity, warm.Seconds), nil
}

// writeCertificate writes the benchmark certificate and its key into dir
// for perf_test's server, and names the two files.
func writeCertificate(dir string) (cert, key string, err error) {
	certPEM, keyPEM, err := transport.CertificatePEM()
	if err != nil {
		return "", "", fmt.Errorf("the benchmark certificate: %w", err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, certPEM, 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
		return "", "", err
	}
	return cert, key, nil
}

// measure runs one measured run inside the window: the probes start, the
// window opens mode.WindowLead ahead, the CPU is counted over the run, and the
// window closes mode.WindowLead after it.
func (w *window) measure(ctx context.Context, run func() (ToolFigure, error)) (ToolFigure, error) {
	if err := w.Open(ctx); err != nil {
		return ToolFigure{}, err
	}
	w.c0 = host.SnapshotCPU()
	f, err := run()
	if err != nil {
		return ToolFigure{}, err
	}
	w.c1 = host.SnapshotCPU()
	if _, err := w.MarkAhead(ctx, false); err != nil {
		return ToolFigure{}, err
	}
	return f, nil
}

func clampTotal(n int64) int64 {
	return min(max(n, perfTestMinTotal), perfTestMaxTotal)
}

// measureIperf3 runs iperf3's server in the server namespace and its client
// in the client namespace for the cell: -l the message size, -O the
// warm-up and -t the time, both rounded up to whole seconds (iperf3 3.12
// takes whole seconds), -R for direction down, -P for streams. The sample
// is iperf3's receiver count after the omitted warm-up (end.sum_received);
// the counters' and the CPU's window is the same span, from the client's
// start plus the warm-up (its connection setup, a few milliseconds, falls
// inside).
func measureIperf3(ctx context.Context, env *mode.Env, t *topo.Topology, c matrix.Cell, w *window) (results.Sample, error) {
	spec := env.Spec
	bin, err := lookTool(tool(env.Tools, func(t *mode.Tools) string { return t.Iperf3 }), "iperf3")
	if err != nil {
		return results.Sample{}, fmt.Errorf("native tcp: %w", err)
	}
	addr, port := topo.ServerAddr.String(), strconv.Itoa(iperf3Port)
	w.Start(ctx)
	defer w.Stop()
	var srvOut tailBuffer
	srv, err := startIn(ctx, t.ServerDevice(), spec.Affinity.ServerCPU(), &srvOut, bin, "-s", "-1", "-p", port, "-B", addr)
	if err != nil {
		return results.Sample{}, fmt.Errorf("native tcp: iperf3 server: %w", err)
	}
	defer stopProcess(srv)
	if err := t.ServerDevice().Do(func() error { return waitPort(ctx, "tcp", iperf3Port, 10*time.Second) }); err != nil {
		return results.Sample{}, fmt.Errorf("native tcp: iperf3 server: %w; its output: %q", err, srvOut.String())
	}
	omit := int(math.Ceil(spec.Warmup.Seconds()))
	secs := max(1, int(math.Ceil(spec.Time.Seconds())))
	args := []string{bin, "-c", addr, "-p", port, "-l", strconv.Itoa(c.Size), "-t", strconv.Itoa(secs), "-O", strconv.Itoa(omit), "-J"}
	if c.Direction == "down" {
		args = append(args, "-R")
	}
	if c.Streams > 1 {
		args = append(args, "-P", strconv.Itoa(c.Streams))
	}
	var out tailBuffer
	out.max = 1 << 20 // the whole JSON
	start := time.Now()
	cmd, err := startIn(ctx, t.ClientDevice(), spec.Affinity.ClientCPU(), &out, args...)
	if err != nil {
		return results.Sample{}, fmt.Errorf("native tcp: iperf3 client: %w", err)
	}
	begin := start.Add(time.Duration(omit) * time.Second)
	if min := time.Now().Add(mode.WindowLead); begin.Before(min) {
		begin = min
	}
	end := begin.Add(time.Duration(secs) * time.Second)
	w.Mark(begin, true)
	w.Mark(end, false)
	waitErr := mode.Sleep(ctx, time.Until(begin))
	w.c0 = host.SnapshotCPU()
	if waitErr == nil {
		waitErr = mode.Sleep(ctx, time.Until(end))
	}
	w.c1 = host.SnapshotCPU()
	if err := cmd.Wait(); err != nil {
		return results.Sample{}, fmt.Errorf("native tcp: iperf3 client (%s): %w: %q", strings.Join(args, " "), err, out.String())
	}
	if waitErr != nil {
		return results.Sample{}, waitErr
	}
	f, err := ParseIperf3(out.Bytes())
	if err != nil {
		return results.Sample{}, fmt.Errorf("native tcp: %w", err)
	}
	smp := w.sample(f, spec.Affinity, float64(omit))
	smp.Streams = c.Streams
	return smp, nil
}
