//go:build linux

package native

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/results"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

// A tool is the C program the native driver measures one transport's
// cells with.
type tool interface {
	// notApplicable says why the tool cannot measure cell c whatever the
	// machine has ("" if it can): the options it does not have.
	notApplicable(c matrix.Cell) string
	// missing says why the tool cannot run here (n/a when it is not
	// given or not installed, with how to get it; unavailable when the
	// kernel lacks what it needs), or "" when it can.
	missing() (results.Status, string)
	// measure measures one sample of c on the topology, whose devices the
	// runner has prepared, with the probes of w.
	measure(ctx context.Context, env *mode.Env, t *topo.Topology, c matrix.Cell, w *window) (results.Sample, error)
}

// toolFor is the tool of a transport's native cells, or nil with why there
// is none: kquic's is the iperf fork where it is given, else the module's
// perf_test; tcp's iperf3; ktls's openssl.
func toolFor(tools *Tools, name string) (tool, string) {
	switch name {
	case "kquic":
		if p := given(tools.IperfQUIC, IperfQUICEnv); p != "" {
			return iperf{path: p, quic: true}, ""
		}
		return perfTest{path: given(tools.PerfTest, PerfTestEnv)}, ""
	case "tcp":
		return iperf{path: tools.Iperf3}, ""
	case "ktls":
		return openssl{}, ""
	case transport.Ngtcp2:
		return ngtcp2Tool{}, ""
	}
	return nil, "no native tool for " + name + " (it is a Go implementation)"
}

// given is path, or the environment variable's value.
func given(path, env string) string {
	if path != "" {
		return path
	}
	return os.Getenv(env)
}

// lookTool finds the program path, or name on PATH when path is "".
func lookTool(path, name string) (string, error) {
	if path != "" {
		name = path
	}
	return exec.LookPath(name)
}

// toolsOf is the run's Tools (made of its flags, matrix.DriverSpec.Options;
// an empty one, kept for the run, when it has none).
func toolsOf(env *mode.Env) *Tools {
	t, _ := env.Option(Name, func() any { return &Tools{} }).(*Tools)
	if t == nil {
		t = &Tools{}
	}
	return t
}

// kernelQUIC says why this kernel has no QUIC sockets, or "".
func kernelQUIC() (results.Status, string) {
	t, err := transport.Get("kquic")
	if err == nil {
		err = t.Available()
	}
	if err != nil {
		return results.StatusUnavailable, fmt.Sprintf("native: %v", err)
	}
	return "", ""
}
