//go:build linux

// Package native is kqbench's native driver (--driver native): the same
// cells as bulk mode measured by C tools between the same two namespaces,
// the module's tests/perf_test for kquic and iperf3 for tcp, with the same
// probes and CPU accounting, so that a cell's Go figure has the kernel's
// own beside it.
package native

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
	"kquic.dev/bench/mode"
	"kquic.dev/bench/results"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

func init() { mode.RegisterDriver(matrix.DriverNative, Mode{mode.Common{Mode: matrix.ModeBulk}}) }

// Mode is the native driver, registered for matrix.DriverNative: it
// measures goodput, as bulk mode does. It runs the tools between the
// single-host topology's namespaces; in two-host mode Check says so per
// cell.
type Mode struct{ mode.Common }

// Check says why a native cell cannot run here: the tool cannot measure
// its options (n/a), the tool is not given or missing (n/a, with how to
// get it), or two-host mode (unavailable).
func (Mode) Check(env *mode.Env, c matrix.Cell) (results.Status, string) {
	if why := notApplicable(c); why != "" {
		return results.StatusNA, "native: " + why
	}
	if env.Remote() {
		return results.StatusUnavailable, "native: the native driver runs the C tools on the single-host topology only (drop --peer)"
	}
	return support(env.Tools, c)
}

// Sample measures one sample of the cell with its tool.
func (Mode) Sample(ctx context.Context, env *mode.Env, c matrix.Cell, i int) (results.Sample, error) {
	if env.Remote() {
		return results.Sample{}, errors.New("native: the native driver runs on the single-host topology only")
	}
	return measure(ctx, env, c, i)
}

// Summary is the goodput's median, the samples and the spread.
func (Mode) Summary(r *results.CellResult) string { return mode.GoodputSummary(r) }

// PerfTestEnv is the environment variable naming the module's perf_test
// when NativeTools.PerfTest is empty.
const PerfTestEnv = "KQUIC_PERF_TEST"

// perfTestMaxMsg is the largest message perf_test's client sends
// (SND_MSG_LEN in tests/perf_test.c).
const perfTestMaxMsg = 4096

// perfTest is the module's perf_test the tools name, or $KQUIC_PERF_TEST.
func perfTest(t *mode.Tools) string {
	if t != nil && t.PerfTest != "" {
		return t.PerfTest
	}
	return os.Getenv(PerfTestEnv)
}

// tool is one of the tools' paths, "" when tools is nil.
func tool(t *mode.Tools, path func(*mode.Tools) string) string {
	if t == nil {
		return ""
	}
	return path(t)
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

// notApplicable says why a native cell cannot be measured whatever
// the machine has ("" if it can): the options the tool does not have.
func notApplicable(c matrix.Cell) string {
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

// support returns the status and note of a native cell that cannot run
// here for want of its tool, or "" for one that can.
func support(tools *mode.Tools, c matrix.Cell) (status results.Status, note string) {
	switch c.Transport {
	case "kquic":
		p := perfTest(tools)
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
		if _, err := lookTool(tool(tools, func(t *mode.Tools) string { return t.Iperf3 }), "iperf3"); err != nil {
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

func transportAvailable(name string) error {
	t, err := transport.Get(name)
	if err != nil {
		return err
	}
	return t.Available()
}

// measure measures one sample of a native cell on the run's topology,
// whose devices the runner has prepared for the cell.
func measure(ctx context.Context, env *mode.Env, c matrix.Cell, sample int) (results.Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, env.Spec.Warmup+env.Spec.Time+2*time.Minute)
	defer cancel()
	t := env.Topology
	w := &window{Window: mode.NewWindow(probes(env, t, c, sample))}
	switch c.Transport {
	case "kquic":
		return measurePerfTest(ctx, env, t, c, w)
	case "tcp":
		return measureIperf3(ctx, env, t, c, w)
	}
	return results.Sample{}, fmt.Errorf("native: no tool for %s", c.Transport)
}

// probes are the probes of a native sample: the capture (no key
// log: the tools keep their keys) and the --explain counters of the devices'
// packets and drops at both ends. The tools are other processes, so their
// syscalls are not counted.
func probes(env *mode.Env, t *topo.Topology, c matrix.Cell, sample int) []mode.Probe {
	var ps []mode.Probe
	cd, sd := t.ClientDevice(), t.ServerDevice()
	if env.CaptureDir != "" {
		name := strings.NewReplacer("/", "_", "=", "-").Replace(c.Key()) + fmt.Sprintf("_%d", sample)
		ps = append(ps, &capture.Probe{Opts: capture.Options{Ifname: cd.Name(), Do: cd.Do, Dir: env.CaptureDir, Cell: name}})
	}
	if env.Explain {
		ps = append(ps, counters.NewProbe(counters.Options{Ends: []counters.End{
			{Name: "client", Ifname: cd.Name(), Do: cd.Do},
			{Name: "server", Ifname: sd.Name(), Do: sd.Do},
		}}))
	}
	return ps
}

// window is a native sample's probes over its window (mode.Window, as the
// other modes run them) and the CPU at the window's two ends.
type window struct {
	*mode.Window
	c0, c1 host.CPUSnapshot
}

// sample makes the Sample of a tool's figure, with the CPU over the
// window and the counters.
func (w *window) sample(f ToolFigure, aff *matrix.Affinity, warmup float64) results.Sample {
	counted, missing := w.Stop()
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
		if err := mode.Sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

var errNoServer = errors.New("the server exited")
