package interop

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"kquic.dev/kmod/knownbugs"
)

// Options configure a run.
type Options struct {
	Servers, Clients []Impl
	Cases            []*Case
	// Dir keeps each case's evidence (Dir/SERVER_CLIENT/CASE).
	Dir string
	// Scale multiplies the cases' file sizes (default 1).
	Scale float64
	// Timeout bounds one case (default 60s).
	Timeout time.Duration
	// Progress gets a line per result.
	Progress io.Writer
	// KeepPassing keeps the evidence of passing cases too.
	KeepPassing bool
	// Module names the QUIC module the kernel ends run on
	// (knownbugs.Builds): its code hash goes with every result of a kernel
	// end, and a failure showing a known bug seen on it is that bug.
	Module []string
	// KernelPairs runs only the pairs with kernel QUIC at one end at least
	// (the host part judges the others).
	KernelPairs bool
}

// failureExplainer is an Impl that knows a fault of its own by its signs
// in a failed case's trace.
type failureExplainer interface {
	// ExplainFailure says what in t shows the fault, playing role, of a
	// case that failed for reason, or "".
	ExplainFailure(role Role, t *Trace, reason string) string
}

// explainFailure is what the ends say of a failed case's trace, as a
// suffix for its reason ("" if nothing).
func explainFailure(server, client Impl, t *Trace, reason string) string {
	if t == nil {
		return ""
	}
	var out string
	for _, x := range []struct {
		impl Impl
		role Role
	}{{server, Server}, {client, Client}} {
		if e, ok := x.impl.(failureExplainer); ok {
			if s := e.ExplainFailure(x.role, t, reason); s != "" {
				out += " (" + s + ")"
			}
		}
	}
	return out
}

// alpnSupporter is an Impl whose support for a case depends on the
// application protocol it runs over.
type alpnSupporter interface {
	SupportsALPN(role Role, c *Case, alpn string) error
}

// kernelImpl is an Impl over kernel QUIC.
type kernelImpl interface{ KernelQUIC() bool }

// OverKernel says whether an implementation runs over kernel QUIC.
func OverKernel(i Impl) bool {
	k, ok := i.(kernelImpl)
	return ok && k.KernelQUIC()
}

// Run runs every case between every server and client.
func Run(ctx context.Context, o Options) ([]Result, error) {
	if o.Scale == 0 {
		o.Scale = 1
	}
	if o.Timeout == 0 {
		o.Timeout = 60 * time.Second
	}
	keepOpenFileLimit()
	for _, i := range append(slices.Clone(o.Servers), o.Clients...) {
		if OverKernel(i) {
			// The module's lines on why it closed a connection or dropped a
			// packet, in each case's kernel log.
			defer enableModuleDebug()()
			break
		}
	}
	var out []Result
	for _, s := range o.Servers {
		for _, c := range o.Clients {
			if o.KernelPairs && !OverKernel(s) && !OverKernel(c) {
				continue
			}
			for _, tc := range o.Cases {
				if err := ctx.Err(); err != nil {
					return out, err
				}
				r := RunCase(ctx, o, s, c, tc)
				out = append(out, r)
				if o.Progress != nil {
					fmt.Fprintf(o.Progress, "%-12s %-10s → %-10s %-4s %s\n", tc.Name, c.Name(), s.Name(), r.Status, r.Reason)
				}
			}
		}
	}
	return out, nil
}

// RunCase runs one case.
func RunCase(ctx context.Context, o Options, server, client Impl, tc *Case) Result {
	r := Result{Server: server.Name(), Client: client.Name(), Case: tc.Name}
	if tc.Unsupported != "" {
		r.Status, r.Reason = Unsupported, tc.Unsupported
		return r
	}
	for _, x := range []struct {
		impl Impl
		role Role
	}{{server, Server}, {client, Client}} {
		if err := x.impl.Supports(x.role, tc); err != nil {
			r.Status, r.Reason = Unsupported, fmt.Sprintf("%s as %s: %v", x.impl.Name(), x.role, err)
			return r
		}
	}
	alpn, err := pickALPN(tc, server, client)
	if err != nil {
		r.Status, r.Reason = Unsupported, err.Error()
		return r
	}
	r.ALPN = alpn
	for _, x := range []struct {
		impl Impl
		role Role
	}{{server, Server}, {client, Client}} {
		if a, ok := x.impl.(alpnSupporter); ok {
			if err := a.SupportsALPN(x.role, tc, alpn); err != nil {
				r.Status, r.Reason = Unsupported, fmt.Sprintf("%s as %s: %v", x.impl.Name(), x.role, err)
				return r
			}
		}
	}
	dir := filepath.Join(o.Dir, server.Name()+"_"+client.Name(), tc.Name)
	r.Evidence = dir
	kernel := OverKernel(server) || OverKernel(client)
	if kernel {
		r.Module = knownbugs.CodeHash(o.Module)
	}
	klog := openKernelLog(kernel)
	o2, err := runCase(ctx, o, server, client, tc, alpn, dir)
	if kernel {
		r.KernelLog = klog.save(dir)
	}
	if o2 != nil {
		r.Millis = o2.Took.Milliseconds()
		if tc.Measure && o2.Took > 0 {
			r.Goodput = float64(8*total(tc, o.Scale)) / o2.Took.Seconds() / 1e6
		}
	}
	if err != nil {
		r.Status, r.Reason = Fail, shorten(err.Error())
		if o2 != nil {
			r.Reason += explainFailure(server, client, o2.Trace, r.Reason)
		}
		if kernel {
			r.Kernel = kernelEnds(OverKernel(server), OverKernel(client))
			r.judgeKnown(o.Module)
		}
	} else {
		r.Status = Pass
	}
	if o2 != nil && o2.checks != nil {
		r.Checks = o2.checks
	}
	if r.Status == Pass && !o.KeepPassing {
		os.RemoveAll(dir)
		r.Evidence = ""
	}
	return r
}

type outcome struct {
	*Outcome
	checks []string
}

func total(tc *Case, scale float64) int {
	n := 0
	for _, s := range tc.Files {
		n += scaled(s, scale)
	}
	return n
}

func scaledOr0(n int, scale float64) int {
	if n == 0 {
		return 0
	}
	return scaled(n, scale)
}

func scaled(size int, scale float64) int { return max(1, int(float64(size)*scale)) }

// pickALPN is the case's application protocol, or, for a case whose checks
// are the transport's, H3 where one end speaks no HQ: the runner's cases
// use hq-interop only to move files, and Debian's ngtcp2 programs speak h3
// alone.
func pickALPN(tc *Case, server, client Impl) (string, error) {
	has := func(i Impl, a string) bool {
		for _, x := range i.ALPNs() {
			if x == a {
				return true
			}
		}
		return false
	}
	for _, a := range []string{tc.ALPN, H3} {
		if has(server, a) && has(client, a) {
			return a, nil
		}
		if tc.ALPN == H3 {
			break
		}
	}
	return "", fmt.Errorf("no application protocol in common: %s speaks %v, %s speaks %v", server.Name(), server.ALPNs(), client.Name(), client.ALPNs())
}

func runCase(ctx context.Context, o Options, server, client Impl, tc *Case, alpn, dir string) (*outcome, error) {
	www, dl := filepath.Join(dir, "www"), filepath.Join(dir, "download")
	for _, d := range []string{www, dl} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	cs, err := newCerts(dir, tc.BigCert)
	if err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	var paths []string
	for i, size := range tc.Files {
		name := "f" + strconv.Itoa(i)
		b := make([]byte, scaled(size, o.Scale))
		rand.Read(b)
		// No NUL byte: the module's http3_test (kquic-c) prints a body
		// through printf's %s, which loses them.
		for i := range b {
			if b[i] == 0 {
				b[i] = byte(1 + i%255)
			}
		}
		if err := os.WriteFile(filepath.Join(www, name), b, 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, "/"+name)
	}
	keys := &KeyLog{}
	sout, cout := newOutput(filepath.Join(dir, "server.log")), newOutput(filepath.Join(dir, "client.log"))
	defer sout.Close()
	defer cout.Close()
	addr := "127.0.0.1:0"
	if tc.IPv6 {
		addr = "[::1]:0"
	}
	cctx, cancel := context.WithTimeout(ctx, max(o.Timeout, tc.Timeout))
	defer cancel()
	skl, ckl := filepath.Join(dir, "server-keys.log"), filepath.Join(dir, "client-keys.log")
	saddr, stop, err := server.Serve(cctx, ServerConfig{Addr: addr, Root: www, Cert: cs.server, CertFile: cs.certFile, KeyFile: cs.keyFile,
		ALPN: alpn, Retry: tc.Retry, Version2: tc.Version2, KeyLog: keys, KeyLogFile: skl, Output: sout})
	if err != nil {
		return nil, fmt.Errorf("start the %s server: %w", server.Name(), err)
	}
	imp := tc.Impair
	imp.RebindAfter, imp.BlackholeAfter = scaledOr0(imp.RebindAfter, o.Scale), scaledOr0(imp.BlackholeAfter, o.Scale)
	relay, err := NewRelay(saddr, imp)
	if err != nil {
		stop()
		return nil, err
	}
	start := time.Now()
	ferr := client.Fetch(cctx, ClientConfig{Server: relay.Addr(), ServerName: "server", Roots: cs.pool, CAFile: cs.caFile, Paths: paths,
		Download: dl, ALPN: alpn, Resumption: tc.Resumption, ZeroRTT: tc.ZeroRTT, MultiConnect: tc.MultiConnect, KeyUpdate: tc.KeyUpdate,
		ChaCha20: tc.ChaCha20, Version2: tc.Version2, KeyLog: keys, KeyLogFile: ckl, Output: cout})
	took := time.Since(start)
	stop()
	relay.Close()
	for _, f := range []string{skl, ckl} {
		if b, err := os.ReadFile(f); err == nil {
			keys.Write(b)
		}
	}
	recs := relay.Records()
	if err := writeEvidence(dir, recs, keys, saddr); err != nil {
		return nil, err
	}
	oc := &outcome{Outcome: &Outcome{Case: tc, Trace: Analyze(recs, keys), Server: saddr, Took: took}}
	if ferr != nil {
		fmt.Fprintf(cout, "kqbench interop: the client failed: %v\n", ferr)
		return oc, fmt.Errorf("the client failed: %w", ferr)
	}
	if err := checkFiles(www, dl, paths); err != nil {
		oc.checks = append(oc.checks, "files: "+err.Error())
		if last := lastLine(filepath.Join(dir, "client.log")); last != "" {
			// A program that exits 0 without its files says why here
			// (ngtcp2's "ERR_HANDSHAKE_TIMEOUT").
			err = fmt.Errorf("%w (the client's last line: %q)", err, last)
		}
		return oc, err
	}
	oc.checks = append(oc.checks, "files: ok")
	return oc, oc.judge()
}

// judge runs the case's checks; the first failure is the verdict.
func (o *outcome) judge() error {
	var first error
	for _, c := range o.Case.Checks {
		if err := c.Fn(o.Outcome); err != nil {
			o.checks = append(o.checks, c.Name+": "+err.Error())
			if first == nil {
				first = fmt.Errorf("%s: %w", c.Name, err)
			}
		} else {
			o.checks = append(o.checks, c.Name+": ok")
		}
	}
	return first
}

// Judge runs a case's checks over a trace: what RunCase does after the files.
func Judge(tc *Case, t *Trace, server *net.UDPAddr) error {
	o := &outcome{Outcome: &Outcome{Case: tc, Trace: t, Server: server}}
	return o.judge()
}

func checkFiles(www, dl string, paths []string) error {
	for _, p := range paths {
		want, err := os.ReadFile(filepath.Join(www, p))
		if err != nil {
			return err
		}
		got, err := os.ReadFile(filepath.Join(dl, p))
		if err != nil {
			return fmt.Errorf("%s was not downloaded", p)
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("%s: %d bytes, SHA-256 %x; want %d bytes, %x", p, len(got), sha256.Sum256(got), len(want), sha256.Sum256(want))
		}
	}
	return nil
}

// output is a file for an end's output, safe for concurrent writes.
type output struct{ f *os.File }

func newOutput(path string) *output {
	f, _ := os.Create(path)
	return &output{f: f}
}

func (o *output) Write(b []byte) (int, error) {
	if o.f == nil {
		return len(b), nil
	}
	return o.f.Write(b)
}

func (o *output) Close() error {
	if o.f == nil {
		return errors.New("no output file")
	}
	return o.f.Close()
}

// shorten keeps a reason of many lines (a client's errors joined, one per
// file) to its first lines and how many more there were: the client's
// output in the evidence has them all.
func shorten(reason string) string {
	const keep = 4
	lines := strings.Split(reason, "\n")
	if len(lines) <= keep {
		return reason
	}
	return strings.Join(lines[:keep], "\n") + fmt.Sprintf("\n(and %d more lines like these)", len(lines)-keep)
}

// lastLine is the last line of a file that is not blank, cut to 200 bytes.
func lastLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200] + "…"
	}
	return l
}
