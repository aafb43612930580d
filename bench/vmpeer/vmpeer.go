//go:build linux

// Package vmpeer runs kqbench's two-host mode between two qemu guests on
// this machine (kqbench matrix --vm-peer): guest B runs `kqbench server`
// on its end of a virtio-net link, guest A runs `kqbench matrix --peer`
// against it on its own end, over the same control channel, token,
// fingerprint check and per-cell device settings as two real hosts. Each
// guest has its own kernel and module (an old client against a new
// server), the link is a NIC driver with interrupts and the offloads it
// implements, and the results file, written by guest A into a directory
// shared with the host, records the pair as what it is: two guests on one
// host ([results.GuestPair]).
package vmpeer

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"kquic.dev/bench/host"
	"kquic.dev/bench/remote"
	"kquic.dev/bench/results"
	"kquic.dev/kmod/vm"
)

// DefaultPort is the server's control port in guest B.
const DefaultPort = 7070

// Loads are the modules of the guests' trees each guest loads (after
// Config's own): kernel TLS, the UDP tunnel kernel QUIC needs, and where
// the tree has them AES-NI and BBR.
var Loads = []string{"tls", "udp_tunnel", "ip6_udp_tunnel", "aesni_intel?", "tcp_bbr?"}

// Config is a matrix between two guests.
type Config struct {
	// A and B are the client's and the server's guests: kernel, module
	// tree, out-of-tree modules (B's may differ from A's, or be none),
	// CPUs, memory, A's Timeout (the whole run's). Their outputs are
	// Stdout, Stderr and PeerOut below.
	A, B vm.Config
	// Link is the virtio-net link between them (default: a tap link where
	// this process may make one, else the socket link). Unless its
	// Offloads name vm.FeatureGROHW, Run switches that off at both ends,
	// so that the link acts as a wire: the sender's TSO super-packets are
	// cut to MTU-sized frames on the way (by the host, where a NIC's TSO
	// would cut them) and the receiver's GRO rebuilds them, as between two
	// machines; with it on, a guest receives the other's 64 KiB packets
	// whole and nothing is ever segmented.
	Link vm.Link
	// Kqbench is the kqbench binary both guests run; they see the host's
	// files read-only (default: this executable).
	Kqbench string
	// Args are kqbench matrix's flags for the run (--transports, --sizes,
	// --mtus, --gso, --time, ...), without those Run gives: --peer, --dev,
	// --token, --fingerprint and --out.
	Args []string
	// Out is the results file on the host (it must not exist); its
	// directory is shared with guest A, which writes it and the CSV beside.
	Out string
	// Token is the secret both ends share (default: a random one).
	// ServerToken, if set, is guest B's instead: a server the client must
	// not get past.
	Token, ServerToken string
	// Port is the server's control port (default DefaultPort).
	Port int
	// Stdout and Stderr receive guest A's output (the matrix's tables and
	// its progress), PeerOut guest B's (the server's log).
	Stdout, Stderr, PeerOut io.Writer
	// PeerGrace is how long the server has to end after the matrix has
	// (vm.DefaultPeerGrace).
	PeerGrace time.Duration
}

// Result is how a run between two guests went.
type Result struct {
	// Pair is how each guest ran (nil if the pair did not start).
	Pair *vm.PairResult
	// Doc is the results file as saved, with the pair recorded; nil if
	// guest A wrote none.
	Doc *results.Document
	// Fingerprint is the server's certificate fingerprint, as guest B
	// printed it and guest A pinned it ("" if B never listened).
	Fingerprint string
}

// reserved are the matrix flags Run sets itself.
var reserved = []string{"--peer", "--dev", "--token", "--fingerprint", "--out", "--vm", "--resume"}

// clientScript runs in guest A: it waits for the fingerprint the host
// copies from guest B's output (the server listens by then), then runs the
// matrix against B's address on the link, pinning it.
const clientScript = `f=$1; port=$2; shift 2; i=0
while [ ! -s "$f" ]; do
  i=$((i+1))
  if [ $i -gt 3000 ]; then
    echo "kqbench matrix --vm-peer: the kqbench server in guest B printed no fingerprint within 5 minutes: its output (after [B]) says why" >&2
    exit 1
  fi
  sleep 0.1
done
exec "$@" --peer "$KQVM_PEER:$port" --dev "$KQVM_DEV" --fingerprint "$(cat "$f")"`

// serverScript runs in guest B: kqbench server on its end of the link.
const serverScript = `exec "$@" --dev "$KQVM_DEV"`

// Run boots the pair, runs the matrix, records the pair in the results
// file and returns it. Both guests are gone when it returns.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	for _, a := range cfg.Args {
		name, _, _ := strings.Cut(a, "=")
		if slices.Contains(reserved, name) {
			return nil, fmt.Errorf("matrix --vm-peer: %s is set by --vm-peer itself (the server is guest B on the link); leave it out", name)
		}
	}
	if cfg.Out == "" {
		return nil, errors.New("matrix --vm-peer: no results file: set Config.Out")
	}
	out, err := filepath.Abs(cfg.Out)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(out); err == nil {
		return nil, fmt.Errorf("matrix --vm-peer: %s exists; choose another --out (results are never overwritten)", out)
	}
	if cfg.Kqbench == "" {
		if cfg.Kqbench, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("matrix --vm-peer: the kqbench binary for the guests: %w", err)
		}
	}
	if cfg.Token == "" {
		cfg.Token = rand.Text()
	}
	if cfg.ServerToken == "" {
		cfg.ServerToken = cfg.Token
	}
	if cfg.Port == 0 {
		cfg.Port = DefaultPort
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, fmt.Errorf("matrix --vm-peer: results directory: %w", err)
	}
	// The rendezvous: the host copies B's fingerprint here for A.
	meet, err := os.MkdirTemp(filepath.Dir(out), ".vm-peer-")
	if err != nil {
		return nil, fmt.Errorf("matrix --vm-peer: %w", err)
	}
	defer os.RemoveAll(meet)
	fpFile := filepath.Join(meet, "fingerprint")

	a, b := cfg.A, cfg.B
	a.Shares = append(slices.Clone(a.Shares), filepath.Dir(out))
	a.Load, b.Load = withLoads(a.Load), withLoads(b.Load)
	a.Env, b.Env = guestEnv(a, cfg.Token), guestEnv(b, cfg.ServerToken)
	a.Stdout, a.Stderr = cfg.Stdout, cfg.Stderr
	var fp fingerprintWatch
	fp.file = fpFile
	b.Stdout = io.MultiWriter(orDiscard(cfg.PeerOut), &fp)
	b.Stderr = cfg.PeerOut
	argsA := []string{"/bin/sh", "-c", clientScript, "kqbench-vm-peer", fpFile, strconv.Itoa(cfg.Port),
		cfg.Kqbench, "matrix", "--out", out}
	argsA = append(argsA, cfg.Args...)
	argsB := []string{"/bin/sh", "-c", serverScript, "kqbench-vm-peer", cfg.Kqbench, "server", "--listen", ":" + strconv.Itoa(cfg.Port)}

	link := cfg.Link
	if _, ok := link.Offloads[vm.FeatureGROHW]; !ok {
		link.Offloads = maps.Clone(link.Offloads)
		if link.Offloads == nil {
			link.Offloads = map[string]bool{}
		}
		link.Offloads[vm.FeatureGROHW] = false
	}

	start, h0 := time.Now(), host.SnapshotCPU()
	pr, runErr := vm.RunPair(ctx, vm.PairConfig{A: a, B: b, ArgsA: argsA, ArgsB: argsB, Link: link, PeerGrace: cfg.PeerGrace})
	h1 := host.SnapshotCPU()
	res := &Result{Pair: pr, Fingerprint: fp.get()}
	if pr == nil {
		return res, fmt.Errorf("matrix --vm-peer: %w", runErr)
	}
	doc, err := results.Load(out)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return res, wrap(runErr)
	case err != nil:
		return res, errors.Join(wrap(runErr), fmt.Errorf("matrix --vm-peer: read the results guest A wrote: %w", err))
	}
	Record(doc, pr, a.CPUs, cfg.Port)
	g := &results.GuestRun{Accel: pr.A.Accel, CPUs: a.CPUs, Seconds: time.Since(start).Seconds()}
	if c, err := host.CPUBetween(h0, h1); err != nil {
		g.CPUUnavailable = err.Error()
	} else {
		g.HostStealCores, g.HostBusyCores = c.StealCores, c.BusyCores
	}
	doc.Env.Guest = g
	res.Doc = doc
	if err := doc.Save(out); err != nil {
		return res, errors.Join(wrap(runErr), fmt.Errorf("matrix --vm-peer: record the pair in %s: %w", out, err))
	}
	return res, wrap(runErr)
}

func wrap(err error) error {
	if err == nil {
		return nil
	}
	var exit *vm.ExitError
	if errors.As(err, &exit) && exit.Guest == "A" && err.Error() == exit.Error() {
		// Not the script's text: what failed, and where to look.
		return &matrixError{fmt.Sprintf("matrix --vm-peer: kqbench matrix in guest A exited with status %d (its output says why)", exit.Code), err}
	}
	return fmt.Errorf("matrix --vm-peer: %w", err)
}

// matrixError is guest A's matrix failing: its message without the
// command line, unwrapping to the vm.ExitError.
type matrixError struct {
	msg string
	err error
}

func (e *matrixError) Error() string { return e.msg }
func (e *matrixError) Unwrap() error { return e.err }

// withLoads is load with Loads added, each once.
func withLoads(load []string) []string {
	out := slices.Clone(load)
	for _, m := range Loads {
		if !slices.Contains(out, m) && !slices.Contains(out, strings.TrimSuffix(m, "?")) {
			out = append(out, m)
		}
	}
	return out
}

// guestEnv is the guest's command environment: the caller's (or this
// process's), with the token, and $KQUIC_MODULE naming the quic module
// this guest loads (so that its results record that file's hash), or none.
func guestEnv(c vm.Config, token string) []string {
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "KQBENCH_TOKEN=") && !strings.HasPrefix(e, "KQUIC_MODULE=") {
			out = append(out, e)
		}
	}
	out = append(out, "KQBENCH_TOKEN="+token)
	for _, m := range c.ModuleFiles {
		if b := filepath.Base(m); strings.HasPrefix(b, "quic.ko") {
			out = append(out, "KQUIC_MODULE="+m)
			break
		}
	}
	return out
}

// fingerprintWatch finds the fingerprint line in guest B's output and
// writes the fingerprint to file, where guest A's script waits for it.
type fingerprintWatch struct {
	file string
	mu   sync.Mutex
	part []byte
	fp   string
}

func (w *fingerprintWatch) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fp != "" {
		return len(b), nil
	}
	w.part = append(w.part, b...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(w.part[:i])
		w.part = w.part[i+1:]
		if fp, ok := strings.CutPrefix(line, remote.FingerprintLine); ok && fp != "" {
			w.fp = strings.TrimSpace(fp)
			w.part = nil
			tmp := w.file + ".tmp"
			if err := os.WriteFile(tmp, []byte(w.fp+"\n"), 0o644); err == nil {
				os.Rename(tmp, w.file)
			}
			return len(b), nil
		}
	}
}

func (w *fingerprintWatch) get() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fp
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
