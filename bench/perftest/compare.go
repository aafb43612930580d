package perftest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CompareOptions configures [Compare]: the four pairings of the module's C
// perf_test and kqbench perf (C to C, Go client to C server, C client to Go
// server, Go to Go) on loopback, each message size, interleaved run by run.
type CompareOptions struct {
	// CPerfTest is the module's built tests/perf_test (or a wrapper that
	// runs it); Kqbench is the kqbench binary whose `perf` is the Go side.
	CPerfTest, Kqbench string
	// Cert and Key are the servers' certificate and key (PEM); CA verifies
	// it for the Go client, as ServerName.
	Cert, Key, CA, ServerName string
	// Sizes are the message sizes; C clients take at most MaxMsgLen, so
	// their pairings are left out of larger sizes.
	Sizes []int
	// Runs is how many times each pairing runs per size; Total the bytes
	// of each run.
	Runs  int
	Total int64
	// Addr is the servers' address; they listen on two consecutive ports
	// from Port.
	Addr string
	Port int
	// Timeout bounds one client run.
	Timeout time.Duration
	// Log receives a line per run (default: discarded).
	Log io.Writer
	// ServerNS and ClientNS, if set, are the network namespaces the
	// servers and the clients run in (the two ends of a veth pair; Addr is
	// then the server end's address). Default: this process's.
	ServerNS, ClientNS Namespace
	// Extra are further contenders run in the same rotation as the
	// pairings (a kqbench matrix cell on the same veth pair).
	Extra []Contender
}

// Namespace runs fn with the calling thread in a network namespace; a
// process started inside fn runs there (netns.NS does this).
type Namespace interface {
	Do(fn func() error) error
}

// Contender is a further measurement set beside the pairings: Run measures
// one run of size-byte messages and returns perf_test's Mbit/s (1024*1024
// bits per second).
type Contender struct {
	Name string
	Run  func(ctx context.Context, size int) (float64, error)
}

// in runs fn in ns, or here if ns is nil.
func in(ns Namespace, fn func() error) error {
	if ns == nil {
		return fn()
	}
	return ns.Do(fn)
}

// Pairing is a client and a server implementation.
type Pairing struct{ Client, Server string }

// Pairings are the four, in the order tables show them.
var Pairings = []Pairing{{"C", "C"}, {"Go", "C"}, {"C", "Go"}, {"Go", "Go"}}

func (p Pairing) String() string { return p.Client + " client -> " + p.Server + " server" }

// CompareResult holds every run's throughput, in perf_test's Mbit/s.
type CompareResult struct {
	Options CompareOptions
	// Runs[size][pairing] lists the throughputs in the order they ran.
	Runs map[int]map[Pairing][]float64
	// Extra[size][name] lists the extra contenders' throughputs.
	Extra map[int]map[string][]float64
	// Costs[size][pairing] lists what each run cost its client and server
	// (CPU time, context switches), in the order they ran; empty where the
	// counters cannot be read (not Linux).
	Costs map[int]map[Pairing][]RunCost
}

var throughputRE = regexp.MustCompile(`([0-9]+(?:\.[0-9]+)?) (K|M)bits/sec`)

// parseThroughput finds perf_test's (or kqbench perf's) throughput line.
func parseThroughput(out []byte) (float64, error) {
	m := throughputRE.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no throughput in the output: %q", lastLine(out))
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		return 0, err
	}
	if string(m[2]) == "K" {
		v /= 1024
	}
	return v, nil
}

func lastLine(b []byte) string {
	l := strings.Split(strings.TrimSpace(string(b)), "\n")
	return l[len(l)-1]
}

// Compare starts a C and a Go server, then runs the clients of every
// pairing, size by size, round-robin (the order rotates each run, so drift
// of the machine does not read as a difference between pairings), and
// returns every figure. Both servers stay up for the whole comparison.
func Compare(ctx context.Context, o CompareOptions) (*CompareResult, error) {
	if o.Runs <= 0 || o.Total <= 0 || len(o.Sizes) == 0 {
		return nil, errors.New("perftest: compare needs runs, a total and message sizes")
	}
	for _, p := range []struct{ what, path string }{{"C perf_test", o.CPerfTest}, {"kqbench", o.Kqbench}, {"certificate", o.Cert}, {"key", o.Key}, {"CA", o.CA}} {
		if _, err := os.Stat(p.path); err != nil {
			return nil, fmt.Errorf("perftest: compare: the %s: %w", p.what, err)
		}
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Minute
	}
	port := map[string]int{"C": o.Port, "Go": o.Port + 1}
	servers := map[string][]string{
		"C":  {o.CPerfTest, "-l", "-a", o.Addr, "-p", strconv.Itoa(port["C"]), "--pkey", o.Key, "--cert", o.Cert},
		"Go": {o.Kqbench, "perf", "-l", "-a", o.Addr, "-p", strconv.Itoa(port["Go"]), "-c", o.Cert, "-k", o.Key},
	}
	serverPID, stop, err := startServers(ctx, o.ServerNS, servers, port)
	defer stop()
	if err != nil {
		return nil, err
	}
	res := &CompareResult{Options: o, Runs: map[int]map[Pairing][]float64{}, Extra: map[int]map[string][]float64{},
		Costs: map[int]map[Pairing][]RunCost{}}
	for run := 0; run < o.Runs; run++ {
		for _, size := range o.Sizes {
			if res.Runs[size] == nil {
				res.Runs[size] = map[Pairing][]float64{}
			}
			if res.Extra[size] == nil {
				res.Extra[size] = map[string][]float64{}
			}
			if res.Costs[size] == nil {
				res.Costs[size] = map[Pairing][]RunCost{}
			}
			// The pairings, then the extra contenders (Pairing.Server
			// empty), rotated together.
			order := slices.Clone(Pairings)
			for _, e := range o.Extra {
				order = append(order, Pairing{Client: e.Name})
			}
			k := run % len(order)
			order = append(order[k:], order[:k]...)
			for _, p := range order {
				if p.Server == "" {
					e := o.Extra[slices.IndexFunc(o.Extra, func(e Contender) bool { return e.Name == p.Client })]
					v, err := e.Run(ctx, size)
					if err != nil {
						return res, fmt.Errorf("perftest: compare: %s, %d-byte messages, run %d: %w", e.Name, size, run+1, err)
					}
					res.Extra[size][e.Name] = append(res.Extra[size][e.Name], v)
					fmt.Fprintf(o.Log, "run %d, %d bytes, %s: %.1f Mbit/s\n", run+1, size, e.Name, v)
					continue
				}
				if p.Client == "C" && size > MaxMsgLen {
					continue
				}
				if err := res.runPairing(ctx, port[p.Server], serverPID[p.Server], p, size, run); err != nil {
					return res, err
				}
			}
		}
	}
	return res, nil
}

// startServers starts the servers (by name, their command lines) in the
// namespace serverNS and waits for each to bind its port; the servers'
// process IDs, and stop to end those started (also after an error).
func startServers(ctx context.Context, serverNS Namespace, servers map[string][]string, port map[string]int) (pids map[string]int, stop func(), err error) {
	pids = map[string]int{}
	var cmds []*exec.Cmd
	stop = func() {
		for _, cmd := range slices.Backward(cmds) {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}
	for _, name := range []string{"C", "Go"} {
		args := servers[name]
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := in(serverNS, cmd.Start); err != nil {
			return nil, stop, fmt.Errorf("perftest: compare: start the %s server: %w", name, err)
		}
		cmds = append(cmds, cmd)
		pids[name] = cmd.Process.Pid
		if err := in(serverNS, func() error { return waitUDPPort(ctx, port[name], 10*time.Second) }); err != nil {
			return nil, stop, fmt.Errorf("perftest: compare: the %s server (%s): %w; its output: %q", name, strings.Join(args, " "), err, out.String())
		}
	}
	return pids, stop, nil
}

// runPairing runs one client of a pairing against the server on port
// (process serverPID), and adds its figure and what it cost to res.
func (res *CompareResult) runPairing(ctx context.Context, port, serverPID int, p Pairing, size, run int) error {
	o := res.Options
	var args []string
	common := []string{"-a", o.Addr, "-p", strconv.Itoa(port), "-m", strconv.Itoa(size), "-t", strconv.FormatInt(o.Total, 10)}
	if p.Client == "C" {
		args = append([]string{o.CPerfTest}, common...)
	} else {
		args = append(append([]string{o.Kqbench, "perf"}, common...), "-s", o.CA, "--server-name", o.ServerName)
	}
	rctx, cancel := context.WithTimeout(ctx, o.Timeout)
	cmd := exec.CommandContext(rctx, args[0], args[1:]...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	srvBefore, srvErr := liveCost(serverPID)
	err := in(o.ClientNS, cmd.Start)
	if err == nil {
		err = cmd.Wait()
	}
	out := buf.Bytes()
	cancel()
	if cli, ok := processCost(cmd.ProcessState); ok && err == nil {
		rc := RunCost{Client: cli}
		if srvAfter, err := liveCost(serverPID); err == nil && srvErr == nil {
			rc.Server, rc.ServerOK = srvAfter.sub(srvBefore), true
		}
		res.Costs[size][p] = append(res.Costs[size][p], rc)
	}
	if err != nil {
		return fmt.Errorf("perftest: compare: %v, %d-byte messages, run %d: %w: %q", p, size, run+1, err, lastLine(out))
	}
	v, err := parseThroughput(out)
	if err != nil {
		return fmt.Errorf("perftest: compare: %v, %d-byte messages, run %d: %w", p, size, run+1, err)
	}
	res.Runs[size][p] = append(res.Runs[size][p], v)
	fmt.Fprintf(o.Log, "run %d, %d bytes, %v: %.1f Mbit/s\n", run+1, size, p, v)
	return nil
}

// waitUDPPort waits until a socket is bound to the UDP port (a kernel QUIC
// socket binds its UDP tunnel socket there) in the calling thread's network
// namespace.
func waitUDPPort(ctx context.Context, port int, limit time.Duration) error {
	hex := fmt.Sprintf(":%04X ", port)
	deadline := time.Now().Add(limit)
	for {
		for _, f := range []string{"/proc/thread-self/net/udp", "/proc/thread-self/net/udp6"} {
			b, _ := os.ReadFile(f)
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				if fields := strings.Fields(sc.Text()); len(fields) > 1 && strings.HasSuffix(fields[1]+" ", hex) {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on UDP port %d after %v", port, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stats are the mean, the standard deviation and the median of runs.
type Stats struct {
	N                    int
	Mean, SD, SE, Median float64
}

// Summarize computes the statistics of xs.
func Summarize(xs []float64) Stats {
	s := Stats{N: len(xs)}
	if s.N == 0 {
		return s
	}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(s.N)
	if s.N > 1 {
		for _, x := range xs {
			s.SD += (x - s.Mean) * (x - s.Mean)
		}
		s.SD = math.Sqrt(s.SD / float64(s.N-1))
		s.SE = s.SD / math.Sqrt(float64(s.N))
	}
	sorted := slices.Sorted(slices.Values(xs))
	if s.N%2 == 1 {
		s.Median = sorted[s.N/2]
	} else {
		s.Median = (sorted[s.N/2-1] + sorted[s.N/2]) / 2
	}
	return s
}

// WriteTable prints, per message size, each pairing's mean with its
// standard deviation, its median, and its ratio to C to C.
func (r *CompareResult) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "perf_test's Mbit/s (1024*1024 bits), %d interleaved runs of %d bytes each; mean +- sd, median, ratio of means to C -> C\n",
		r.Options.Runs, r.Options.Total)
	fmt.Fprintf(w, "%-9s", "msg")
	for _, p := range Pairings {
		fmt.Fprintf(w, " | %-30s", p)
	}
	for _, e := range r.Options.Extra {
		fmt.Fprintf(w, " | %-30s", e.Name)
	}
	fmt.Fprintln(w)
	for _, size := range r.Options.Sizes {
		fmt.Fprintf(w, "%-9s", sizeName(size))
		base := Summarize(r.Runs[size][Pairings[0]])
		for _, p := range Pairings {
			xs := r.Runs[size][p]
			if len(xs) == 0 {
				fmt.Fprintf(w, " | %-30s", "n/a (C client: at most 4 KiB)")
				continue
			}
			s := Summarize(xs)
			ratio := "-"
			if base.N > 0 && base.Mean > 0 {
				ratio = fmt.Sprintf("%.2f", s.Mean/base.Mean)
			}
			fmt.Fprintf(w, " | %-30s", fmt.Sprintf("%.1f +- %.1f, med %.1f, %s", s.Mean, s.SD, s.Median, ratio))
		}
		for _, e := range r.Options.Extra {
			s := Summarize(r.Extra[size][e.Name])
			ratio := "-"
			if base.N > 0 && base.Mean > 0 {
				ratio = fmt.Sprintf("%.2f", s.Mean/base.Mean)
			}
			fmt.Fprintf(w, " | %-30s", fmt.Sprintf("%.1f +- %.1f, med %.1f, %s", s.Mean, s.SD, s.Median, ratio))
		}
		fmt.Fprintln(w)
	}
}

func sizeName(n int) string {
	if n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}
