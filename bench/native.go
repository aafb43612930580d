//go:build linux

package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"kquic.dev/bench/capture"
	"kquic.dev/bench/counters"
	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

// PerfTestEnv is the environment variable naming the module's perf_test
// when NativeTools.PerfTest is empty.
const PerfTestEnv = "KQUIC_PERF_TEST"

// perfTestMaxMsg is the largest message perf_test's client sends
// (SND_MSG_LEN in tests/perf_test.c).
const perfTestMaxMsg = 4096

// NativeTools says where the native driver's C tools are.
type NativeTools struct {
	// PerfTest is the module's built tests/perf_test, or a wrapper that
	// runs it (default: $KQUIC_PERF_TEST). kquic does not ship it.
	PerfTest string
	// Iperf3 and OpenSSL are the programs (default: found on PATH).
	Iperf3, OpenSSL string

	mu    sync.Mutex
	rates map[string]float64 // bytes per second of the last run, by cell key
}

func (n *NativeTools) perfTest() string {
	if n.PerfTest != "" {
		return n.PerfTest
	}
	return os.Getenv(PerfTestEnv)
}

func lookTool(path, name string) (string, error) {
	if path != "" {
		name = path
	}
	return exec.LookPath(name)
}

// opensslKTLS reports whether the openssl program's s_server has -ktls.
var opensslKTLS = sync.OnceValues(func() (bool, error) {
	p, err := exec.LookPath("openssl")
	if err != nil {
		return false, err
	}
	out, _ := exec.Command(p, "s_server", "-help").CombinedOutput()
	return OpenSSLHasKTLS(out), nil
})

// nativeNotApplicable says why a native cell cannot be measured whatever
// the machine has ("" if it can): the options the tool does not have.
func nativeNotApplicable(c matrix.Cell) string {
	switch c.Transport {
	case "kquic":
		switch {
		case c.Size > perfTestMaxMsg:
			return fmt.Sprintf("perf_test's client sends at most %d-byte messages (SND_MSG_LEN)", perfTestMaxMsg)
		case c.Direction != "up":
			return "perf_test's client only sends (direction up)"
		case c.Streams != 1:
			return "perf_test sends on one stream"
		}
	case "tcp":
		if c.Crypto {
			return "plain TCP has no encryption (see ktls)"
		}
	case "ktls":
		if !c.Crypto {
			return "kernel TLS always encrypts (see tcp)"
		}
	default:
		return "no native tool for " + c.Transport + " (it is a Go implementation)"
	}
	return ""
}

// nativeSupport returns the status and note of a native cell that cannot
// run here, or "" for one that can.
func (r *Runner) nativeSupport(c matrix.Cell, remote bool) (status results.Status, note string) {
	if why := nativeNotApplicable(c); why != "" {
		return results.StatusNA, "native: " + why
	}
	if remote {
		return results.StatusUnavailable, "native: the native driver runs the C tools on the single-host topology only (drop --peer)"
	}
	switch c.Transport {
	case "kquic":
		p := r.Native.perfTest()
		if p == "" {
			return results.StatusNA, "native: the module's perf_test is not given: build the module's tests (lxin/quic: make -C tests perf_test) and pass --perf-test PATH or set $" + PerfTestEnv
		}
		if _, err := lookTool(p, ""); err != nil {
			return results.StatusNA, fmt.Sprintf("native: perf_test %s: %v (pass --perf-test PATH or set $%s to the module's built tests/perf_test)", p, err, PerfTestEnv)
		}
		if err := transportAvailable("kquic"); err != nil {
			return results.StatusUnavailable, "native: " + err.Error()
		}
	case "tcp":
		if _, err := lookTool(r.Native.Iperf3, "iperf3"); err != nil {
			return results.StatusNA, fmt.Sprintf("native: iperf3: %v (apt-get install iperf3, or pass --iperf3 PATH)", err)
		}
	case "ktls":
		ok, err := opensslKTLS()
		if err != nil {
			return results.StatusNA, fmt.Sprintf("native: openssl: %v (apt-get install openssl)", err)
		}
		if !ok {
			return results.StatusNA, "native: this openssl has no kTLS (s_server -help lists no -ktls; Debian's OpenSSL is built without enable-ktls): install an OpenSSL 3 built with enable-ktls to measure the ktls column natively"
		}
		return results.StatusUnavailable, "native: openssl s_server/s_client -ktls cells are not implemented yet (this openssl has -ktls)"
	}
	return "", ""
}

// nativeNA reports whether c is a native cell that is n/a here (its tool
// is missing), and so takes no time.
func (r *Runner) nativeNA(c matrix.Cell, remote bool) bool {
	if c.Driver != matrix.DriverNative {
		return false
	}
	st, _ := r.nativeSupport(c, remote)
	return st == results.StatusNA
}

func transportAvailable(name string) error {
	t, err := transport.Get(name)
	if err != nil {
		return err
	}
	return t.Available()
}

// measureNative measures one sample of a native cell on the topology t,
// whose devices the runner has prepared for the cell.
func (r *Runner) measureNative(ctx context.Context, t *topo.Topology, c matrix.Cell, sample int) (results.Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, r.Spec.Warmup+r.Spec.Time+2*time.Minute)
	defer cancel()
	w := &nativeWindow{probeWindow: probeWindow{probes: r.nativeProbes(t, c, sample)}}
	switch c.Transport {
	case "kquic":
		return r.measurePerfTest(ctx, t, c, w)
	case "tcp":
		return r.measureIperf3(ctx, t, c, w)
	}
	return results.Sample{}, fmt.Errorf("native: no tool for %s", c.Transport)
}

// nativeProbes are the probes of a native sample: the capture (no key
// log: the tools keep their keys) and the --explain counters of the devices'
// packets and drops at both ends. The tools are other processes, so their
// syscalls are not counted.
func (r *Runner) nativeProbes(t *topo.Topology, c matrix.Cell, sample int) []Probe {
	var ps []Probe
	cd, sd := t.ClientDevice(), t.ServerDevice()
	if r.CaptureDir != "" {
		name := strings.NewReplacer("/", "_", "=", "-").Replace(c.Key()) + fmt.Sprintf("_%d", sample)
		ps = append(ps, &capture.Probe{Opts: capture.Options{Ifname: cd.Name(), Do: cd.Do, Dir: r.CaptureDir, Cell: name}})
	}
	if r.Explain {
		ps = append(ps, counters.NewProbe(counters.Options{Ends: []counters.End{
			{Name: "client", Ifname: cd.Name(), Do: cd.Do},
			{Name: "server", Ifname: sd.Name(), Do: sd.Do},
		}}))
	}
	return ps
}

// nativeWindow is a native sample's probes over its window (probeWindow,
// as measure runs them) and the CPU at the window's two ends.
type nativeWindow struct {
	probeWindow
	c0, c1 host.CPUSnapshot
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sample makes the Sample of a tool's figure, with the CPU over the
// window and the counters.
func (w *nativeWindow) sample(f ToolFigure, aff *matrix.Affinity, warmup float64) results.Sample {
	counted, missing := w.stop()
	cpu, cpuNote := host.CPUOf(w.c0, w.c1)
	smp := results.Sample{
		Bytes: f.Bytes, Seconds: f.Seconds, Bps: float64(f.Bytes) * 8 / f.Seconds, CPU: cpu, CPUUnavailable: cpuNote,
		Streams: 1, Warmup: warmup, Finished: time.Now().UTC(),
		CyclesUnavailable: "native driver: cycles are not counted",
		Counters:          counted, CountersMissing: missing,
	}
	if counted != nil {
		smp.CountersMissing = slices.DeleteFunc(smp.CountersMissing, func(m string) bool { return strings.HasPrefix(m, "syscalls:") })
		smp.CountersMissing = append(smp.CountersMissing, "syscalls: not counted for the native driver's cells: the tools are other processes")
	}
	if aff != nil {
		sv := host.PinnedBetween(w.c0, w.c1, aff.Server)
		smp.Ends = &results.EndsCPU{Client: host.PinnedBetween(w.c0, w.c1, aff.Client), Server: &sv}
	}
	return smp
}

// tailBuffer keeps the last max bytes (default 8 KiB) written to it: a
// tool's output, whose result and errors come last.
type tailBuffer struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	limit := t.max
	if limit == 0 {
		limit = 8 << 10
	}
	if len(t.b) > 2*limit {
		t.b = append([]byte(nil), t.b[len(t.b)-limit:]...)
	}
	return len(p), nil
}

// Bytes is what the buffer kept.
func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.b...)
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return lastLine(t.b)
}

// startIn starts args in the namespace of d (pinned to cpu with taskset
// when cpu >= 0 and taskset exists), its output going to out.
func startIn(ctx context.Context, d *topo.Device, cpu int, out *tailBuffer, args ...string) (*exec.Cmd, error) {
	if cpu >= 0 {
		if ts, err := exec.LookPath("taskset"); err == nil {
			args = append([]string{ts, "-c", strconv.Itoa(cpu)}, args...)
		}
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	// The process forks from the locked thread inside the namespace.
	if err := d.Do(cmd.Start); err != nil {
		return nil, fmt.Errorf("start %s: %w", args[0], err)
	}
	return cmd, nil
}

func stopProcess(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// waitPort waits until a socket is bound to the port (proto "udp" or
// "tcp", listening for tcp) in the calling thread's network namespace.
func waitPort(ctx context.Context, proto string, port int, limit time.Duration) error {
	suffix := fmt.Sprintf(":%04X", port)
	deadline := time.Now().Add(limit)
	for {
		for _, f := range []string{"/proc/thread-self/net/" + proto, "/proc/thread-self/net/" + proto + "6"} {
			b, _ := os.ReadFile(f)
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				fl := strings.Fields(sc.Text())
				if len(fl) > 3 && strings.HasSuffix(fl[1], suffix) && (proto == "udp" || fl[3] == "0A") {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s port %d after %v", proto, port, limit)
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

var errNoServer = errors.New("the server exited")

func (n *NativeTools) rate(key string) float64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.rates[key]
}

func (n *NativeTools) setRate(key string, bytesPerSec float64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.rates == nil {
		n.rates = map[string]float64{}
	}
	n.rates[key] = bytesPerSec
}
