//go:build linux

package native

import (
	"context"
	"fmt"
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
	"kquic.dev/internal/tailbuf"
)

// perfTestPort is the port perf_test's server listens on, in the server
// namespace.
const perfTestPort = 4450

// perfTestMaxMsg is the largest message perf_test's client sends
// (SND_MSG_LEN in tests/perf_test.c).
const perfTestMaxMsg = 4096

// perfTest is kquic's tool where the iperf fork is not given: the module's
// tests/perf_test (path; "" when not given).
type perfTest struct{ path string }

func (perfTest) notApplicable(c matrix.Cell) string {
	switch {
	case c.Size > perfTestMaxMsg:
		return fmt.Sprintf("perf_test's client sends at most %d-byte messages (SND_MSG_LEN); give the module author's iperf3 fork (lxin/iperf, built against libquic: --iperf-quic PATH or $%s) to measure every size", perfTestMaxMsg, IperfQUICEnv)
	case c.Direction != "up":
		return "perf_test's client only sends (direction up)"
	case c.Streams != 1:
		return "perf_test sends on one stream"
	case c.Conns > 1:
		return "perf_test's server serves one connection at a time (accept, serve, close, accept), so connections side by side would queue; give the module author's iperf3 fork (-P: --iperf-quic PATH or $" + IperfQUICEnv + ")"
	}
	return ""
}

func (p perfTest) missing() (results.Status, string) {
	if p.path == "" {
		return results.StatusNA, "native: the module's perf_test is not given: build the module's tests (lxin/quic: make -C tests perf_test) and pass --perf-test PATH or set $" + PerfTestEnv + " (or give its iperf3 fork: --iperf-quic PATH or $" + IperfQUICEnv + ")"
	}
	if _, err := lookTool(p.path, ""); err != nil {
		return results.StatusNA, fmt.Sprintf("native: perf_test %s: %v (pass --perf-test PATH or set $%s to the module's built tests/perf_test)", p.path, err, PerfTestEnv)
	}
	return kernelQUIC()
}

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
func (p perfTest) measure(ctx context.Context, env *mode.Env, t *topo.Topology, c matrix.Cell, w *window) (results.Sample, error) {
	spec, tools := env.Spec, toolsOf(env)
	pt := p.path
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
	var srvOut tailbuf.Buffer
	srv, err := startIn(ctx, t.ServerDevice(), spec.Affinity.ServerCPU(), &srvOut,
		crypt([]string{pt, "-l", "-a", addr, "-p", port, "--pkey", key, "--cert", cert})...)
	if err != nil {
		return results.Sample{}, fmt.Errorf("native kquic: perf_test server: %w", err)
	}
	defer stopProcess(srv)
	if err := t.ServerDevice().Do(func() error { return waitPort(ctx, "udp", perfTestPort, 10*time.Second) }); err != nil {
		return results.Sample{}, fmt.Errorf("native kquic: perf_test server (%s): %w; its output: %q", pt, err, srvOut.LastLine())
	}
	run := func(total int64) (ToolFigure, error) {
		args := crypt([]string{pt, "-a", addr, "-p", port, "-m", strconv.Itoa(c.Size), "-t", strconv.FormatInt(total, 10)})
		var out tailbuf.Buffer
		cmd, err := startIn(ctx, t.ClientDevice(), spec.Affinity.ClientCPU(), &out, args...)
		if err != nil {
			return ToolFigure{}, fmt.Errorf("native kquic: perf_test client: %w", err)
		}
		if err := cmd.Wait(); err != nil {
			return ToolFigure{}, fmt.Errorf("native kquic: perf_test client (%s): %w: %q; the server's output: %q", strings.Join(args, " "), err, out.LastLine(), srvOut.LastLine())
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
	smp := w.sample(f, spec.Affinity, warm.Seconds)
	smp.Tool = ToolPerfTest
	return smp, nil
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
