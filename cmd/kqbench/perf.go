//go:build linux

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"time"

	"github.com/spf13/cobra"

	"kquic.dev/bench/perftest"
	"kquic.dev/bench/perfveth"
	"kquic.dev/kquic"
)

// perfFlags are kqbench perf's flags, perf_test's where it has them.
type perfFlags struct {
	listen, noCrypt, insecure bool
	addr, port                string
	cert, key, ca, serverName string
	cpuProfile, traceFile     string
	msgLen, conns             int
	mode, reqLen, rspLen      int
	total, numReqs            int64
	timeout                   time.Duration
}

func newPerfCmd() *cobra.Command {
	p := &perfFlags{}
	cmd := &cobra.Command{
		Use:   "perf",
		Short: "The kernel QUIC module's perf_test (throughput and request/response modes) over the Go API, interoperable with the C one",
		Long:  perfHelp,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return p.run(cmd) },
	}
	p.register(cmd)
	cmd.AddCommand(newPerfCompareCmd())
	return cmd
}

// perfHelp is perf --help's text.
const perfHelp = `Speak the throughput mode of the kernel QUIC module's tests/perf_test.c
through kquic, with its flags: either end can be the C program and the other
this one, so the Go API is measured against the module's own tool on the
same kernel, with the same message sizes.

  kqbench perf -l -a 127.0.0.1 -p 1234 -c server.pem -k server-key.pem
  kqbench perf -a 127.0.0.1 -p 1234 -m 4096 -t 67108864 -s ca.pem

The client prints the throughput as perf_test does (binary "Mbits/sec") and
in MB/s.

With -d 1 (both ends, as perf_test) it speaks the request/response mode:
the client sends -n requests of -q bytes one at a time on one stream, each
answered with -r bytes, and prints perf_test's latency lines with the
percentiles (p50 to p99.99, from an HDR histogram) and requests per second:

  kqbench perf -l -d 1 -r 4096 -c server.pem -k server-key.pem
  kqbench perf -d 1 -q 64 -r 4096 -n 10000 -s ca.pem Unlike perf_test's client, it verifies the server's certificate:
give the CA with -s, or --insecure to skip the check.`

// register adds the flags to cmd.
func (p *perfFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVarP(&p.listen, "listen", "l", false, "work as a server")
	f.StringVarP(&p.addr, "addr", "a", "127.0.0.1", "server IP address (to listen on, or to connect to)")
	f.StringVarP(&p.port, "port", "p", "1234", "server port")
	f.StringVarP(&p.cert, "cert", "c", "", "server: certificate file (PEM)")
	f.StringVarP(&p.key, "pkey", "k", "", "server: private key file (PEM)")
	f.StringVarP(&p.ca, "ca", "s", "", "client: CA file (PEM) that signed the server's certificate (default: the system's)")
	f.StringVar(&p.serverName, "server-name", "", "client: name to verify the certificate for (default: --addr)")
	f.BoolVar(&p.insecure, "insecure", false, "client: do not verify the server's certificate (as perf_test's client)")
	f.IntVarP(&p.msgLen, "msg_len", "m", perftest.MaxMsgLen, "client: bytes per write (perf_test takes up to 4096; this takes more)")
	f.Int64VarP(&p.total, "tot_len", "t", 1<<30, "client: total bytes to send")
	f.IntVar(&p.conns, "connections", 1, "client: make this many connections one after another, each a full handshake and a run of --tot_len, and report connections per second")
	f.IntVarP(&p.mode, "mode", "d", 0, "0: throughput, 1: request/response (both ends must agree)")
	f.IntVarP(&p.reqLen, "req_len", "q", perftest.DefReqLen, fmt.Sprintf("client, -d 1: request length (1..%d)", perftest.MaxReqLen))
	f.IntVarP(&p.rspLen, "rsp_len", "r", perftest.DefRspLen, fmt.Sprintf("-d 1: response length; the server sends it, the client reads it (perf_test takes up to %d)", perftest.MaxRspLen))
	f.Int64VarP(&p.numReqs, "num_reqs", "n", perftest.DefNumReqs, "client, -d 1: number of requests")
	f.BoolVarP(&p.noCrypt, "no_crypt", "x", false, "disable 1-RTT encryption (both ends must)")
	f.StringVar(&p.cpuProfile, "cpuprofile", "", "write a Go CPU profile of this end to the file (go tool pprof)")
	f.StringVar(&p.traceFile, "trace", "", "write a Go execution trace of this end to the file (go tool trace): where goroutines waited and which threads ran them")
	f.DurationVar(&p.timeout, "timeout", 10*time.Minute, "client: limit for the whole run")
}

// run records the profile and trace asked for and runs this end: the
// server with --listen, else the client.
func (p *perfFlags) run(cmd *cobra.Command) error {
	stopProfile, err := record(p.cpuProfile, "CPU profile", pprof.StartCPUProfile, pprof.StopCPUProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	stopTrace, err := record(p.traceFile, "execution trace", trace.Start, trace.Stop)
	if err != nil {
		return err
	}
	defer stopTrace()
	ap := net.JoinHostPort(p.addr, p.port)
	tp := kquic.TransportParameters{MaxIdleTimeout: 120 * time.Second, Disable1RTTEncryption: p.noCrypt}
	if p.mode != 0 && p.mode != 1 {
		return fmt.Errorf("perf: --mode %d: use 0 (throughput) or 1 (request/response)", p.mode)
	}
	if p.listen {
		return p.serve(cmd, ap, tp)
	}
	return p.client(cmd, ap, tp)
}

// serve is the server end: it answers clients until the command's context
// ends.
func (p *perfFlags) serve(cmd *cobra.Command, ap string, tp kquic.TransportParameters) error {
	out := cmd.OutOrStdout()
	if p.cert == "" || p.key == "" {
		return errors.New("perf: a server needs --cert and --pkey (PEM files)")
	}
	pair, err := tls.LoadX509KeyPair(p.cert, p.key)
	if err != nil {
		return fmt.Errorf("perf: load the certificate: %w", err)
	}
	ln, err := kquic.Listen("udp", ap, &kquic.Config{
		TLS:       &tls.Config{Certificates: []tls.Certificate{pair}, NextProtos: []string{perftest.ALPN}},
		Transport: tp,
	})
	if err != nil {
		return fmt.Errorf("perf: %w", err)
	}
	defer ln.Close()
	fmt.Fprintf(out, "listening on %s\n", ln.Addr())
	if p.mode == 1 {
		return perftest.ServeRR(cmd.Context(), ln, p.rspLen, func(n int64, err error) {
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "client failed after %d requests: %v\n", n, err)
				return
			}
			fmt.Fprintf(out, "DONE: Processed %d requests total\n", n)
		})
	}
	return perftest.Serve(cmd.Context(), ln, func(n int64, err error) {
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "client failed after %d bytes: %v\n", n, err)
			return
		}
		fmt.Fprintf(out, "received %d bytes\n", n)
	})
}

// client is the client end: one run of the mode, or --connections runs,
// and its figures.
func (p *perfFlags) client(cmd *cobra.Command, ap string, tp kquic.TransportParameters) error {
	out := cmd.OutOrStdout()
	if p.mode == 0 && (p.msgLen <= 0 || p.total <= 0) {
		return fmt.Errorf("perf: --msg_len (%d) and --tot_len (%d) must be positive", p.msgLen, p.total)
	}
	tc, err := p.clientTLS()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), p.timeout)
	defer cancel()
	cfg := &kquic.Config{TLS: tc, Transport: tp}
	if p.mode == 1 {
		if p.conns > 1 {
			return errors.New("perf: --connections is for throughput mode (-d 0)")
		}
		c, err := kquic.Dial(ctx, "udp", ap, cfg)
		if err != nil {
			return fmt.Errorf("perf: %w", err)
		}
		defer c.Close()
		r, err := perftest.RunRR(ctx, c, p.reqLen, p.rspLen, p.numReqs)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, r)
		return nil
	}
	if p.conns > 1 {
		// No session cache: every handshake is a full one.
		r, err := perftest.RunConnections(ctx, ap, cfg, p.conns, p.msgLen, p.total)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, r)
		return nil
	}
	c, err := kquic.Dial(ctx, "udp", ap, cfg)
	if err != nil {
		return fmt.Errorf("perf: %w", err)
	}
	defer c.Close()
	r, err := perftest.Run(ctx, c, p.msgLen, p.total)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, r)
	return nil
}

// clientTLS is the client's TLS configuration: the server's certificate
// verified against --ca (or the system's CAs) unless --insecure.
func (p *perfFlags) clientTLS() (*tls.Config, error) {
	tc := &tls.Config{NextProtos: []string{perftest.ALPN}, ServerName: p.serverName, InsecureSkipVerify: p.insecure}
	if tc.ServerName == "" {
		tc.ServerName = p.addr
	}
	if p.ca != "" {
		pem, err := os.ReadFile(p.ca)
		if err != nil {
			return nil, fmt.Errorf("perf: read the CA: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("perf: %s holds no PEM certificate", p.ca)
		}
	}
	return tc, nil
}

func newPerfCompareCmd() *cobra.Command {
	var (
		o        perftest.CompareOptions
		sizes    []string
		veth     bool
		gso      bool
		mtu      int
		cellTime time.Duration
	)
	cmd := &cobra.Command{
		Use:   "compare --c-perf-test PATH",
		Short: "Run the four pairings of the module's C perf_test and kqbench perf, interleaved, and compare them",
		Long: `Start the module's C perf_test server and kqbench's, then run C -> C,
Go client -> C server, C client -> Go server and Go -> Go for each message
size, round-robin (the order rotates each run), and print each pairing's
mean, standard deviation and median and its ratio to C -> C. C clients take
at most 4 KiB messages, so larger sizes show the Go client only.

A second table says why: per MiB sent, each pairing's CPU milliseconds and
voluntary and involuntary context switches, of the client process (whole
life) and of the server during the run. A C end is one thread that waits in
the kernel; a Go end adds the runtime's threads, and their wake-ups (each may
preempt the sending thread on its CPU) show in these columns.

With --veth the servers run in one network namespace and the clients in
another, joined by a veth pair set up as kqbench matrix sets it (--mtu,
--gso), and a fifth contender runs in the same rotation: kqbench matrix's
own kquic cell on that pair (its warm-up, then --cell-time of counted bytes),
so the matrix's kernel QUIC column can be set against the C tool.

Run it where the kernel has the QUIC module, e.g. in the guest:
  make perf-compare KQUIC_MODULE=/path/quic.ko PERF_TEST=/path/perf_test`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.Sizes, err = parseSizes(sizes); err != nil {
				return err
			}
			if o.CPerfTest == "" {
				return errors.New("perf compare: --c-perf-test is required: the module's built tests/perf_test (this project ships none)")
			}
			if o.Kqbench == "" {
				if o.Kqbench, err = os.Executable(); err != nil {
					return err
				}
			}
			o.Log = cmd.ErrOrStderr()
			if veth {
				t, err := perfveth.Use(&o, mtu, gso, cellTime)
				if err != nil {
					return err
				}
				defer t.Close()
			}
			res, err := perftest.Compare(cmd.Context(), o)
			if res != nil {
				res.WriteTable(cmd.OutOrStdout())
				res.WriteCosts(cmd.OutOrStdout())
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.CPerfTest, "c-perf-test", "", "the module's built tests/perf_test (or a script that runs it)")
	f.StringVar(&o.Kqbench, "kqbench", "", "the kqbench whose perf is the Go side (default: this one)")
	f.StringSliceVar(&sizes, "sizes", []string{"1K", "4K", "64K"}, "message sizes")
	f.IntVar(&o.Runs, "runs", 6, "runs of each pairing per size")
	f.Int64Var(&o.Total, "total", 32<<20, "bytes per run")
	f.StringVar(&o.Addr, "addr", "127.0.0.1", "the servers' address")
	f.IntVar(&o.Port, "port", 9400, "the C server's port; the Go server takes the next")
	f.StringVar(&o.Cert, "cert", "testdata/certs/server.pem", "the servers' certificate")
	f.StringVar(&o.Key, "key", "testdata/certs/server-key.pem", "the servers' key")
	f.StringVar(&o.CA, "ca", "testdata/certs/ca.pem", "the CA the Go client verifies the servers with")
	f.StringVar(&o.ServerName, "server-name", "localhost", "the name the Go client verifies")
	f.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "limit for one client run")
	f.BoolVar(&veth, "veth", false, "run servers and clients in two namespaces joined by a veth pair, and kqbench matrix's kquic cell beside them")
	f.IntVar(&mtu, "mtu", 1500, "with --veth: the pair's MTU")
	f.BoolVar(&gso, "gso", true, "with --veth: GSO on the pair (as kqbench matrix's --gso)")
	f.DurationVar(&cellTime, "cell-time", 2*time.Second, "with --veth: the matrix cell's counted time (after a 500ms warm-up)")
	return cmd
}

// record starts a CPU profile or an execution trace into the file at path
// (none if path is empty) and returns what stops it and closes the file.
func record(path, what string, start func(io.Writer) error, stop func()) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("perf: %s: %w", what, err)
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("perf: start the %s: %w", what, err)
	}
	return func() {
		stop()
		f.Close()
	}, nil
}
