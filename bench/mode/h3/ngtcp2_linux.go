//go:build linux

package h3

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/ngtcp2"
	"kquic.dev/bench/results"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
	"kquic.dev/internal/tailbuf"
)

// ngtcp2Port is the port gtlsserver listens on in the server namespace.
const ngtcp2Port = 4453

// ngtcp2Timing is how the row's figures are timed, for the record.
const ngtcp2Timing = "gtlsclient's qlog: from its first packet with the request to the last packet of the response (the program's start and the handshake left out; the qlog's clock counts milliseconds; writing it costs the client about a fifth of its time at full speed: 50 MB over loopback took 0.37-0.42 s with it, 0.30-0.34 s without)"

// ngtcp2Check is the h3-ngtcp2 row's Check: Debian's programs must be
// there, between the single-host topology's namespaces, for a workload
// they can run.
func ngtcp2Check(env *mode.Env, c matrix.Cell) (results.Status, string) {
	if _, _, err := ngtcp2.Programs(); err != nil {
		return results.StatusNA, err.Error()
	}
	switch c.Workload {
	case WorkloadDownload, WorkloadUpload:
	case WorkloadPage:
		return results.StatusNA, "gtlsclient requests all its URLs at once: it cannot fetch the page's HTML first and then the resources it names (page)"
	case WorkloadObjects:
		return results.StatusNA, "gtlsclient fetches its list of URLs once and exits: it holds no load of connections over --time (objects)"
	default:
		return results.StatusNA, "each gtlsclient run is a process of its own: a setup's time would be the program's start as much as the handshake"
	}
	if env.Remote() {
		return results.StatusUnavailable, "h3-ngtcp2 runs Debian's programs between the single-host topology's namespaces only"
	}
	note := "timed as " + ngtcp2Timing
	if env.Spec.UDPRcvBuf > 0 {
		note = join(note, "--udp-rcvbuf does not apply: the programs size their sockets themselves")
	}
	if env.Spec.Window > 0 {
		note = join(note, "--window does not apply: the programs' own windows (autotuned up to 6 MiB)")
	}
	return "", note
}

// ngtcp2Sample measures one sample of an h3-ngtcp2 cell: gtlsserver in the
// server namespace serves generated bodies (/N is N bytes), gtlsclient in
// the client namespace fetches one of the cell's size (download) or posts
// the cell's size (upload). The time is the request's to the response's
// last byte, by the client's qlog.
func ngtcp2Sample(ctx context.Context, env *mode.Env, c matrix.Cell, i int) (results.Sample, error) {
	_, probes, err := env.Prepare(c, i)
	if err != nil {
		return results.Sample{}, err
	}
	ls, ok := env.Local()
	if !ok {
		return results.Sample{}, fmt.Errorf("%s: the single-host topology only", Ngtcp2)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute+env.Spec.Time)
	defer cancel()
	cli, srvBin, err := ngtcp2.Programs()
	if err != nil {
		return results.Sample{}, err
	}
	dir, err := os.MkdirTemp(scratch(), "kqbench-h3-ngtcp2-")
	if err != nil {
		return results.Sample{}, err
	}
	defer os.RemoveAll(dir)
	cert, key, root, err := ngtcp2Files(dir)
	if err != nil {
		return results.Sample{}, err
	}
	aff := env.Spec.Affinity
	srvDo, cliDo := ls.T.Server.Do, env.Client.Do
	start := func(do func(func() error) error, cpu int, out *tailbuf.Buffer, bin string, args ...string) (*exec.Cmd, error) {
		return startProgram(ctx, do, cpu, out, bin, args...)
	}
	var srvOut tailbuf.Buffer
	srv, err := start(srvDo, aff.ServerCPU(), &srvOut, srvBin, ngtcp2.ServerArgs(c, root, topo.ServerAddr, ngtcp2Port, key, cert)...)
	if err != nil {
		return results.Sample{}, fmt.Errorf("%s: gtlsserver: %w", Ngtcp2, err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	if err := srvDo(func() error { return waitUDP(ctx, ngtcp2Port) }); err != nil {
		return results.Sample{}, fmt.Errorf("%s: gtlsserver: %w; its output: %q", Ngtcp2, err, srvOut.LastLine())
	}
	qlog := filepath.Join(dir, "client.qlog")
	run := func(data string, paths ...string) (time.Duration, error) {
		args := append([]string{"--qlog-file", qlog}, ngtcp2.ClientArgs(c, topo.ServerAddr, ngtcp2Port, data, paths)...)
		var out tailbuf.Buffer
		cmd, err := start(cliDo, aff.ClientCPU(), &out, cli, args...)
		if err != nil {
			return 0, fmt.Errorf("%s: gtlsclient: %w", Ngtcp2, err)
		}
		if err := cmd.Wait(); err != nil {
			return 0, fmt.Errorf("%s: gtlsclient %s: %w: %q; the server's output: %q", Ngtcp2, strings.Join(args, " "), err, out.LastLine(), srvOut.LastLine())
		}
		q, err := os.ReadFile(qlog)
		if err != nil {
			return 0, fmt.Errorf("%s: gtlsclient's qlog: %w", Ngtcp2, err)
		}
		return ngtcp2.StreamSpan(q, 0)
	}
	var data string
	var paths []string
	var bytesMoved int64
	switch c.Workload {
	case WorkloadDownload:
		paths, bytesMoved = []string{"/" + strconv.Itoa(c.Size)}, int64(c.Size)
	case WorkloadUpload:
		data, paths, bytesMoved = filepath.Join(dir, "body"), []string{"/1"}, int64(c.Size)
		if err := ngtcp2.WriteBody(data, int64(c.Size)); err != nil {
			return results.Sample{}, err
		}
	default:
		return results.Sample{}, fmt.Errorf("%s: workload %q is n/a", Ngtcp2, c.Workload)
	}
	client0, server0 := ReadCounts(cliDo), ReadCounts(srvDo)
	pw := mode.NewWindow(probes)
	defer pw.Stop()
	if err := pw.Open(ctx); err != nil {
		return results.Sample{}, err
	}
	d, rerr := run(data, paths...)
	counted, missing, perr := pw.Close(ctx)
	client, server := ReadCounts(cliDo).Sub(client0), ReadCounts(srvDo).Sub(server0)
	if rerr != nil {
		return results.Sample{}, rerr
	}
	if perr != nil {
		return results.Sample{}, perr
	}
	secs := d.Seconds()
	if secs <= 0 {
		return results.Sample{}, fmt.Errorf("%s %s: under a millisecond by gtlsclient's qlog: too short to time (larger --sizes)", Ngtcp2, WorkloadText(c))
	}
	stack := "ngtcp2 (Debian's gtlsclient/gtlsserver, GnuTLS)"
	notes := []string{"timed as " + ngtcp2Timing, "the programs' default windows (gtlsclient --help, gtlsserver --help)"}
	clientSet := WebSettings{Protocol: "h3", Stack: stack, StreamWindow: 6 << 20, ConnWindow: 15 << 20, Notes: notes}
	serverSet := WebSettings{Protocol: "h3", Stack: stack, InitialStreamWindow: 256 << 10, StreamWindow: 6 << 20, ConnWindow: 6 << 20, Autotuned: true, Notes: notes}
	w := &Sample{Workload: c.Workload, Requests: int64(len(paths)), Bytes: bytesMoved, Seconds: secs, Client: clientSet, Server: serverSet,
		ServerRcvbufErrors: server.RcvbufErrors, ClientRcvbufErrors: client.RcvbufErrors, ServerRetrans: server.Retrans, ClientRetrans: client.Retrans,
		RmemMax: server.RmemMax, RTTSeconds: env.Spec.Impairment().Delay.Seconds()}
	smp := results.Sample{Bytes: bytesMoved, Seconds: secs, Bps: float64(bytesMoved) * 8 / secs, Streams: c.Streams, Finished: time.Now().UTC(),
		Counters: counted, CountersMissing: missing, Payload: w, Tool: "gtlsclient/gtlsserver (ngtcp2)"}
	return smp, nil
}

// ngtcp2Files writes the server's certificate and key into dir and makes
// the directory it serves from.
func ngtcp2Files(dir string) (cert, key, root string, err error) {
	certPEM, keyPEM, err := transport.CertificatePEM()
	if err != nil {
		return "", "", "", err
	}
	cert, key, root = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "root")
	for _, f := range []struct {
		p string
		b []byte
	}{{cert, certPEM}, {key, keyPEM}} {
		if err := os.WriteFile(f.p, f.b, 0o600); err != nil {
			return "", "", "", err
		}
	}
	return cert, key, root, os.Mkdir(root, 0o755)
}

// startProgram starts bin with args in the namespace do runs in, pinned
// to cpu (-1: not pinned), its output to out.
func startProgram(ctx context.Context, do func(func() error) error, cpu int, out *tailbuf.Buffer, bin string, args ...string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	err := do(func() error {
		if cpu >= 0 {
			return host.StartPinned(cmd, cpu)
		}
		return cmd.Start()
	})
	return cmd, err
}

// scratch is a memory file system for the programs' files where there is
// one (in the guest /tmp is the host's, over 9p), else the default.
func scratch() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() && unix.Access("/dev/shm", unix.W_OK) == nil {
		return "/dev/shm"
	}
	return ""
}

// waitUDP waits until a socket is bound to the UDP port in the calling
// thread's network namespace.
func waitUDP(ctx context.Context, port int) error {
	suffix := fmt.Sprintf(":%04X", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, f := range []string{"/proc/thread-self/net/udp", "/proc/thread-self/net/udp6"} {
			b, _ := os.ReadFile(f)
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				if fl := strings.Fields(sc.Text()); len(fl) > 1 && strings.HasSuffix(fl[1], suffix) {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on UDP port %d after 10s", port)
		}
		if err := mode.Sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}
