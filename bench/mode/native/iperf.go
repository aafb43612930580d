//go:build linux

package native

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/results"
	"kquic.dev/bench/topo"
	"kquic.dev/internal/tailbuf"
)

// iperf3Port is the port iperf3's server listens on, in the server
// namespace.
const iperf3Port = 5201

// iperf is tcp's tool, iperf3 (path; "": on PATH), or with quic kquic's,
// the module author's iperf3 fork run with --quic (lxin/iperf, built
// against libquic): the tool the module's README measured with, for every
// size, encrypted or not (--no-cryption at both ends).
type iperf struct {
	path string
	quic bool
}

func (i iperf) name() string {
	if i.quic {
		return "native kquic: iperf3 --quic"
	}
	return "native tcp: iperf3"
}

func (i iperf) notApplicable(c matrix.Cell) string {
	switch {
	case !i.quic && c.Crypto:
		return "plain TCP has no encryption (see ktls)"
	case i.quic && c.Streams != 1:
		return "the iperf fork opens a QUIC connection per stream (-P), where kqbench's kquic cell opens its streams on one connection"
	case c.Send == "sendfile" && (i.quic || c.Direction != "up"):
		return "sendfile: iperf3 -Z sends so from the client over TCP only"
	case c.Send != "" && c.Send != "sendfile":
		return c.Send + ": iperf3 has write and sendfile (-Z) only"
	}
	return ""
}

func (i iperf) missing() (results.Status, string) {
	if !i.quic {
		if _, err := lookTool(i.path, "iperf3"); err != nil {
			return results.StatusNA, fmt.Sprintf("native: iperf3: %v (apt-get install iperf3, or pass --iperf3 PATH)", err)
		}
		return "", ""
	}
	if _, err := lookTool(i.path, ""); err != nil {
		return results.StatusNA, fmt.Sprintf("native: the iperf fork %s: %v (build lxin/iperf against libquic and pass --iperf-quic PATH or set $%s)", i.path, err, IperfQUICEnv)
	}
	return kernelQUIC()
}

// measure runs iperf3's server in the server namespace and its client in
// the client namespace for the cell: -l the message size (both ends read
// and write that much at a time), -O the warm-up and -t the time, both
// rounded up to whole seconds (iperf3 3.12 takes whole seconds), -R for
// direction down, -P for streams times connections (a cell of several
// connections: each one's streams are the next -P streams; iperf3 3.12
// runs them all on one thread, pinned as the first connection's ends). The sample is iperf3's receiver count
// after the omitted warm-up (end.sum_received); the counters' and the
// CPU's window is the same span, from the client's start plus the warm-up
// (its connection setup, a few milliseconds, falls inside).
func (i iperf) measure(ctx context.Context, env *mode.Env, t *topo.Topology, c matrix.Cell, w *window) (results.Sample, error) {
	spec := env.Spec
	bin, err := lookTool(i.path, "iperf3")
	if err != nil {
		return results.Sample{}, fmt.Errorf("%s: %w", i.name(), err)
	}
	srvArgs, cliArgs, cleanup, err := i.quicArgs(c)
	if err != nil {
		return results.Sample{}, err
	}
	defer cleanup()
	addr, port := topo.ServerAddr.String(), strconv.Itoa(iperf3Port)
	w.Start(ctx)
	defer w.Stop()
	var srvOut tailbuf.Buffer
	srv, err := startIn(ctx, t.ServerDevice(), spec.Affinity.ServerCPU(), &srvOut, append([]string{bin, "-s", "-1", "-p", port, "-B", addr}, srvArgs...)...)
	if err != nil {
		return results.Sample{}, fmt.Errorf("%s server: %w", i.name(), err)
	}
	defer stopProcess(srv)
	if err := t.ServerDevice().Do(func() error { return waitPort(ctx, "tcp", iperf3Port, 10*time.Second) }); err != nil {
		return results.Sample{}, fmt.Errorf("%s server: %w; its output: %q", i.name(), err, srvOut.LastLine())
	}
	omit := int(math.Ceil(spec.Warmup.Seconds()))
	secs := max(1, int(math.Ceil(spec.Time.Seconds())))
	args := []string{bin, "-c", addr, "-p", port, "-l", strconv.Itoa(c.Size), "-t", strconv.Itoa(secs), "-O", strconv.Itoa(omit), "-J"}
	args = append(args, cliArgs...)
	if c.Direction == "down" {
		args = append(args, "-R")
	}
	if par := c.Streams * max(c.Conns, 1); par > 1 {
		args = append(args, "-P", strconv.Itoa(par)) // a TCP connection (or a fork's QUIC connection) per stream
	}
	if c.Send == "sendfile" {
		args = append(args, "-Z") // iperf3's "zero copy": sendfile(2) from its buffer's file
	}
	var out tailbuf.Buffer
	out.Max = 1 << 20 // the whole JSON
	start := time.Now()
	cmd, err := startIn(ctx, t.ClientDevice(), spec.Affinity.ClientCPU(), &out, args...)
	if err != nil {
		return results.Sample{}, fmt.Errorf("%s client: %w", i.name(), err)
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
	runErr := cmd.Wait()
	if waitErr != nil {
		return results.Sample{}, waitErr
	}
	f, err := ParseIperf3(out.Bytes())
	if runErr != nil && !(i.quic && err == nil && exitStatus(runErr) == 1) {
		// The fork (lxin/iperf 8815c4e) exits with status 1 after printing
		// a whole --json result: its iperf_json_finish prints the document,
		// frees it, then fails to print it again. A parsed result with no
		// "error" is the run's.
		return results.Sample{}, fmt.Errorf("%s client (%s): %w: %q", i.name(), strings.Join(args, " "), runErr, out.LastLine())
	}
	if err != nil {
		return results.Sample{}, fmt.Errorf("%s: %w", i.name(), err)
	}
	smp := w.sample(f, spec.Affinity, float64(omit))
	if c.Conns > 0 {
		if err := w.conns(&smp, c, f, spec.Affinity); err != nil {
			return results.Sample{}, fmt.Errorf("%s: %w", i.name(), err)
		}
	}
	smp.Streams, smp.Tool = c.Streams, ToolIperf3
	if i.quic {
		smp.Tool = ToolIperfQUIC
	}
	return smp, nil
}

// quicArgs are the fork's arguments for a kquic cell: the server's
// certificate and key (written to a directory cleanup removes), and
// --no-cryption at both ends for an unencrypted cell; none for tcp.
func (i iperf) quicArgs(c matrix.Cell) (srv, cli []string, cleanup func(), err error) {
	cleanup = func() {}
	if !i.quic {
		return nil, nil, cleanup, nil
	}
	dir, err := os.MkdirTemp("", "kqbench-native-")
	if err != nil {
		return nil, nil, cleanup, fmt.Errorf("%s: %w", i.name(), err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	cert, key, err := writeCertificate(dir)
	if err != nil {
		cleanup()
		return nil, nil, func() {}, fmt.Errorf("%s: %w", i.name(), err)
	}
	srv, cli = []string{"--pkey", key, "--cert", cert}, []string{"--quic"}
	if !c.Crypto {
		srv, cli = append(srv, "--no-cryption"), append(cli, "--no-cryption")
	}
	return srv, cli, cleanup, nil
}

// exitStatus is a process's exit status in err, or -1.
func exitStatus(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
