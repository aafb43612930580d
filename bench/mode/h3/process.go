//go:build linux

package h3

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/internal/tailbuf"
)

// With the ends pinned (--affinity), a sample's server is a process of its
// own: this program again, on the server's CPU, in the server's
// namespace, and the client is this process on the client's CPU, each
// with GOMAXPROCS 1. An HTTP server's goroutines cannot be pinned one by
// one as the bulk mode's streams are, and in one process the runtime
// would run both ends on both CPUs: the ends would share the CPUs, and
// the figure would be neither a server's nor a load generator's. Pinned
// apart, the client is a load generator as h2load is (its own process
// and CPU) and the server a server as nginx is.

// serverProcessEnv, set in a process's environment, makes the process the
// server of one sample (serverProcess) instead of what it was built as.
const serverProcessEnv = "KQBENCH_H3_SERVER_PROCESS"

// init runs the server process before the program's main (or a test
// binary's tests): every binary that holds the h3 mode can be its server.
func init() {
	if spec := os.Getenv(serverProcessEnv); spec != "" {
		os.Exit(serverProcess(spec, os.Stdin, os.Stdout, os.Stderr))
	}
}

// processSpec is what the server process serves.
type processSpec struct {
	Transport string     `json:"transport"`
	Addr      netip.Addr `json:"addr"`
	Window    int        `json:"window,omitempty"`
	UDPRcvBuf int        `json:"udp_rcvbuf,omitempty"`
	CC        string     `json:"cc,omitempty"`
}

// serverProcess serves the spec's transport in this process's namespace,
// writes the RemoteServer to out, serves until in ends (the parent closes
// it, or exits), then writes the namespace's Counts over its life.
func serverProcess(spec string, in io.Reader, out, errs io.Writer) int {
	var s processSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintf(errs, "kqbench: $%s: %v\n", serverProcessEnv, err)
		return 2
	}
	here := func(fn func() error) error { return fn() }
	sv, info, err := Serve(s.Transport, here, s.Addr, Config{Window: s.Window, UDPRcvBuf: s.UDPRcvBuf, CC: s.CC})
	if err != nil {
		fmt.Fprintf(errs, "kqbench: the h3 mode's server process: %s: %v\n", s.Transport, err)
		return 1
	}
	info.Settings.Notes = append(info.Settings.Notes, fmt.Sprintf("a process of its own on CPU %s, GOMAXPROCS %d", cpus(), runtime.GOMAXPROCS(0)))
	enc := json.NewEncoder(out)
	if err := enc.Encode(info); err != nil {
		sv.Stop()
		fmt.Fprintf(errs, "kqbench: the h3 mode's server process: %v\n", err)
		return 1
	}
	io.Copy(io.Discard, in)
	counts, err := sv.Stop()
	if eerr := enc.Encode(counts); err == nil {
		err = eerr
	}
	if err != nil {
		fmt.Fprintf(errs, "kqbench: the h3 mode's server process: stop: %v\n", err)
		return 1
	}
	return 0
}

// cpus is the Cpus_allowed_list of this process.
func cpus() string {
	b, _ := os.ReadFile("/proc/self/status")
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// startProcess starts transport name's server as a process of its own in
// the namespace do runs in, on the affinity's server CPU, pins this
// process to its client CPU, and returns the server's address and the
// function that stops it (and unpins this process).
func startProcess(ctx context.Context, do func(func() error) error, a *matrix.Affinity, name string, cfg Config) (RemoteServer, func(context.Context) (Counts, error), error) {
	exe, err := os.Executable()
	if err != nil {
		return RemoteServer{}, nil, fmt.Errorf("the server process: this program's path: %w", err)
	}
	spec, err := json.Marshal(processSpec{Transport: name, Addr: cfg.serverAddr(), Window: cfg.Window, UDPRcvBuf: cfg.UDPRcvBuf, CC: cfg.CC})
	if err != nil {
		return RemoteServer{}, nil, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), serverProcessEnv+"="+string(spec), "GOMAXPROCS=1")
	stderr := &tailbuf.Buffer{Max: 16 << 10}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return RemoteServer{}, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return RemoteServer{}, nil, err
	}
	if err := do(func() error { return host.StartPinned(cmd, a.Server) }); err != nil {
		return RemoteServer{}, nil, fmt.Errorf("the server process: %w", err)
	}
	failed := func(what string, err error) error {
		stdin.Close()
		werr := cmd.Wait()
		return fmt.Errorf("the server process (%s on CPU %d): %s: %w (it exited: %v; its errors: %q)", exe, a.Server, what, err, werr, stderr.String())
	}
	dec := json.NewDecoder(stdout)
	var info RemoteServer
	if err := dec.Decode(&info); err != nil {
		return RemoteServer{}, nil, failed("no address", err)
	}
	restore, err := host.PinProcess(a.Client)
	if err != nil {
		return RemoteServer{}, nil, failed("pin the client", err)
	}
	stop := func(context.Context) (Counts, error) {
		restore()
		stdin.Close()
		var c Counts
		derr := dec.Decode(&c)
		if err := cmd.Wait(); err != nil {
			return c, fmt.Errorf("the server process (on CPU %d): %w (its errors: %q)", a.Server, err, stderr.String())
		}
		if derr != nil {
			return c, fmt.Errorf("the server process (on CPU %d) gave no counters: %w", a.Server, derr)
		}
		return c, nil
	}
	return info, stop, nil
}
