//go:build linux

package tlsagent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/testcerts"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

// The QUIC module's kernel-side consumer, quic_sample_test.ko (built beside
// quic.ko): loading it runs one handshake request through the agent, as a
// client (role=client, the default) against ip:port or as a server
// (role=server) listening there; alpn=ticket runs two connections, the second
// resuming the first with early data. Its init returns the handshake's
// status, so insmod fails with the status the agent reported.
const sampleName = "quic_sample_test"

// samplePath returns the sample module's path, or skips.
func samplePath(t *testing.T) string {
	t.Helper()
	p := os.Getenv("KQUIC_SAMPLE_MODULE")
	if p == "" {
		m := os.Getenv("KQUIC_MODULE")
		if m == "" {
			t.Skip("needs the QUIC module's sample consumer: set KQUIC_MODULE to quic.ko in its build tree (quic_sample_test.ko beside it) or KQUIC_SAMPLE_MODULE to quic_sample_test.ko")
		}
		p = filepath.Join(filepath.Dir(m), sampleName+".ko")
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("needs the QUIC module's sample consumer: %v (set KQUIC_SAMPLE_MODULE)", err)
	}
	testenv.Require(t, kmod.FeatureQUIC)
	return p
}

// runSample loads the sample module with params and returns its init's
// result and the kernel log lines it wrote. The module is unloaded again
// (its init returning 0 leaves it loaded).
func runSample(t *testing.T, path, params string) (error, []string) {
	t.Helper()
	unix.DeleteModule(sampleName, 0) // a left-over would make the load a no-op
	log := kmod.OpenKmsg()
	defer log.Close()
	err := kmod.LoadFile(path, params)
	lines := log.Lines()
	if err == nil {
		if derr := unix.DeleteModule(sampleName, 0); derr != nil {
			t.Errorf("unload %s: %v", sampleName, derr)
		}
	}
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, "quic_test:") {
			out = append(out, l)
		}
	}
	t.Logf("%s %s: %v\n  %s", sampleName, params, err, strings.Join(out, "\n  "))
	return err, out
}

func wantLines(t *testing.T, lines []string, want ...string) {
	t.Helper()
	i := 0
	for _, l := range lines {
		if i < len(want) && strings.Contains(l, want[i]) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("kernel log lacks %q (in order) in:\n  %s", want[i], strings.Join(lines, "\n  "))
	}
}

// sampleAgentConfig trusts the test CA and serves the test certificate.
func sampleAgentConfig(t *testing.T) *Config { return serverConfig(t) }

func freePort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// quicServer serves the sample client: for each connection it reads the
// client's message on its stream and answers on a new stream of its own.
func quicServer(t *testing.T, alpn string, conns int) (port int, got chan string) {
	t.Helper()
	cert, err := testcerts.Server()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := kquic.Listen("udp", "127.0.0.1:0", &kquic.Config{
		TLS:       &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{alpn}, MinVersion: tls.VersionTLS13},
		Allow0RTT: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got = make(chan string, 2*conns)
	go func() {
		for i := 0; i < conns; i++ {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			c, err := ln.Accept(ctx)
			if err != nil {
				cancel()
				got <- "accept: " + err.Error()
				return
			}
			st := c.ConnectionState()
			got <- fmt.Sprintf("conn %d: resumed=%v early=%v", i, st.DidResume, c.EarlyDataAccepted())
			s, err := c.AcceptUniStream(ctx)
			if err != nil {
				got <- "accept stream: " + err.Error()
				cancel()
				return
			}
			b, _ := io.ReadAll(s)
			got <- string(b)
			out, err := c.OpenUniStream()
			if err == nil {
				out.Write([]byte("hello quic client!"))
				out.Close()
			}
			// Hold the connection until the client closes it.
			select {
			case <-c.Done():
			case <-ctx.Done():
			}
			c.Close()
			cancel()
		}
	}()
	return ln.Addr().(*net.UDPAddr).Port, got
}

func recvN(t *testing.T, ch chan string, n int) []string {
	t.Helper()
	var out []string
	for i := 0; i < n; i++ {
		select {
		case s := <-ch:
			out = append(out, s)
		case <-time.After(30 * time.Second):
			t.Fatalf("server: got %q, then nothing for 30s", out)
		}
	}
	return out
}

// The sample as a client (x509, the server checked against peer name
// server.test) against a kernel QUIC server of ours.
func TestSampleClientX509(t *testing.T) {
	ko := samplePath(t)
	a, logs := listen(t, sampleAgentConfig(t))
	serve(t, a)
	port, got := quicServer(t, "sample", 1)
	err, lines := runSample(t, ko, fmt.Sprintf("role=client ip=127.0.0.1 port=%d", port))
	if err != nil {
		t.Fatalf("insmod: %v", err)
	}
	wantLines(t, lines, "handshake completed", "send 'hello quic server!' on stream 2", "recv 'hello quic client!' on stream 3")
	if s := recvN(t, got, 2); s[1] != "hello quic server!" {
		t.Errorf("server got %q", s)
	}
	if len(logs.find("handshake completed", "client_hello/x509", "TLS 1.3")) != 1 {
		t.Error("the agent logged no completed client_hello/x509 handshake")
	}
}

// The sample as a server (x509, the agent presents the configured
// certificate) against a kernel QUIC client of ours.
func TestSampleServerX509(t *testing.T) {
	ko := samplePath(t)
	a, logs := listen(t, sampleAgentConfig(t))
	serve(t, a)
	port := freePort(t)
	wait := startSampleServer(t, ko, fmt.Sprintf("role=server ip=127.0.0.1 port=%d", port), port)
	pool, err := testcerts.Pool()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &kquic.Config{TLS: &tls.Config{RootCAs: pool, ServerName: "server.test", NextProtos: []string{"sample"}}, HandshakeTimeout: 5 * time.Second}
	c := dialSample(t, port, cfg)
	reply := exchange(t, c, "hello quic server!")
	c.Close()
	if reply != "hello quic client!" {
		t.Errorf("client got %q", reply)
	}
	err, lines := wait()
	if err != nil {
		t.Fatalf("insmod: %v", err)
	}
	wantLines(t, lines, "handshake completed", "recv 'hello quic server!' on stream 2", "send 'hello quic client!' on stream 1")
	if len(logs.find("handshake completed", "server_hello/x509")) != 1 {
		t.Error("the agent logged no completed server_hello/x509 handshake")
	}
}

// startSampleServer loads the sample as a server in the background. The
// module's init blocks in accept until a client comes, and a module stuck in
// init blocks every later load of it: so wait, and the test's cleanup, send
// throwaway connection attempts until the load has returned.
func startSampleServer(t *testing.T, ko, params string, port int) (wait func() (error, []string)) {
	t.Helper()
	type out struct {
		err   error
		lines []string
	}
	done := make(chan out, 1)
	go func() {
		err, lines := runSample(t, ko, params)
		done <- out{err, lines}
	}()
	var res *out
	wait = func() (error, []string) {
		if res != nil {
			return res.err, res.lines
		}
		kick := time.NewTimer(30 * time.Second)
		defer kick.Stop()
		for deadline := time.Now().Add(90 * time.Second); ; {
			select {
			case o := <-done:
				res = &o
				return o.err, o.lines
			case <-kick.C:
				if time.Now().After(deadline) {
					t.Fatal("the sample server's load did not return")
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				c, err := kquic.Dial(ctx, "udp", fmt.Sprintf("127.0.0.1:%d", port), &kquic.Config{TLS: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"sample", "ticket"}}})
				cancel()
				if err == nil {
					c.Close()
				}
				kick.Reset(time.Second)
			}
		}
	}
	t.Cleanup(func() { wait() })
	return wait
}

// dialSample dials the sample server once it listens: the module's init
// opens the socket after insmod starts, and nothing signals that it has.
func dialSample(t *testing.T, port int, cfg *kquic.Config) *kquic.Conn {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := kquic.Dial(ctx, "udp", fmt.Sprintf("127.0.0.1:%d", port), cfg)
		cancel()
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("dial the sample server: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// exchange sends msg on a new unidirectional stream and returns what the
// sample answers on its own stream.
func exchange(t *testing.T, c *kquic.Conn, msg string) string {
	t.Helper()
	s, err := c.OpenUniStream()
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte(msg))
	s.Close()
	return readReply(t, c)
}

func readReply(t *testing.T, c *kquic.Conn) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, err := c.AcceptStream(ctx)
	if err != nil {
		t.Fatalf("accept the sample's stream: %v", err)
	}
	b, _ := io.ReadAll(in)
	return string(b)
}

// alpn=ticket, client: the agent waits for the server's ticket and gives the
// consumer session data; the consumer's second connection resumes with it
// and sends 0-RTT data.
func TestSampleClientTicket(t *testing.T) {
	ko := samplePath(t)
	a, logs := listen(t, sampleAgentConfig(t))
	serve(t, a)
	port, got := quicServer(t, "ticket", 2)
	err, lines := runSample(t, ko, fmt.Sprintf("role=client ip=127.0.0.1 port=%d alpn=ticket", port))
	if err != nil {
		t.Fatalf("insmod: %v", err)
	}
	wantLines(t, lines, "handshake completed", "save ticket", "recv 'hello quic client!'",
		"send 'hello quic server! I'm back!'", "handshake completed", "recv 'hello quic client!'")
	s := recvN(t, got, 4)
	if s[0] != "conn 0: resumed=false early=false" || s[1] != "hello quic server!" ||
		s[2] != "conn 1: resumed=true early=true" || s[3] != "hello quic server! I'm back!" {
		t.Errorf("server saw %q, want a full handshake, then a resumed one with early data", s)
	}
	if len(logs.find("handshake completed", "resumed", "0-rtt")) != 1 {
		t.Error("the agent logged no resumed 0-RTT handshake")
	}
}

// alpn=ticket, server: the agent sends a ticket our client resumes with,
// sending 0-RTT data the sample server takes.
func TestSampleServerTicket(t *testing.T) {
	ko := samplePath(t)
	a, logs := listen(t, sampleAgentConfig(t))
	serve(t, a)
	port := freePort(t)
	wait := startSampleServer(t, ko, fmt.Sprintf("role=server ip=127.0.0.1 port=%d alpn=ticket", port), port)
	pool, err := testcerts.Pool()
	if err != nil {
		t.Fatal(err)
	}
	cache := tls.NewLRUClientSessionCache(4)
	cfg := &kquic.Config{TLS: &tls.Config{RootCAs: pool, ServerName: "server.test", NextProtos: []string{"ticket"}, ClientSessionCache: cache}, HandshakeTimeout: 5 * time.Second}
	c := dialSample(t, port, cfg)
	if reply := exchange(t, c, "hello quic server!"); reply != "hello quic client!" {
		t.Errorf("first connection: got %q", reply)
	}
	c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c2, s2, err := kquic.DialEarly(ctx, "udp", fmt.Sprintf("127.0.0.1:%d", port), cfg, []byte("hello quic server! I'm back!"))
	if err != nil {
		t.Fatalf("second connection: %v", err)
	}
	s2.Close()
	st := c2.ConnectionState()
	reply := readReply(t, c2)
	early := c2.EarlyDataAccepted()
	c2.Close()
	if !st.DidResume || !early {
		t.Errorf("the second connection: resumed %v, early data accepted %v; want both", st.DidResume, early)
	}
	if reply != "hello quic client! welcome back!" {
		t.Errorf("second connection: got %q", reply)
	}
	err, lines := wait()
	if err != nil {
		t.Fatalf("insmod: %v", err)
	}
	wantLines(t, lines, "handshake completed", "wait for next connection", "handshake completed", "recv 'hello quic server! I'm back!'")
	if len(logs.find("handshake completed", "server_hello/x509", "resumed")) != 1 {
		t.Error("the agent logged no resumed server handshake")
	}
}

// PSK: the key serial is checked in the real keyring; the handshake itself
// fails with EOPNOTSUPP (crypto/tls has no external PSK), and so does insmod.
func TestSamplePSK(t *testing.T) {
	ko := samplePath(t)
	a, logs := listen(t, sampleAgentConfig(t))
	serve(t, a)
	port, _ := quicServer(t, "sample", 1)
	id := addKey(t, "kquic-sample-psk", make([]byte, 32))
	err, _ := runSample(t, ko, fmt.Sprintf("role=client ip=127.0.0.1 port=%d psk=%d", port, id))
	if !errors.Is(err, unix.EOPNOTSUPP) {
		t.Errorf("insmod with psk=%d: %v, want EOPNOTSUPP", id, err)
	}
	if len(logs.find("handshake failed", "client_hello/psk", "status=EOPNOTSUPP", "external PSK")) != 1 {
		t.Error("the agent logged no PSK failure")
	}
	none := absentSerial(t)
	err, _ = runSample(t, ko, fmt.Sprintf("role=client ip=127.0.0.1 port=%d psk=%d", port, none))
	if !errors.Is(err, unix.ENOKEY) {
		t.Errorf("insmod with psk=%d (no such key): %v, want ENOKEY", none, err)
	}
	if len(logs.find("handshake failed", "status=ENOKEY", fmt.Sprintf("PSK key %d", none))) != 1 {
		t.Error("the agent logged no missing-key failure naming the serial")
	}
}

// blackHole is a UDP socket that takes datagrams and never answers: a peer
// that never answers.
func blackHole(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go io.Copy(io.Discard, readerOf(c))
	return c.LocalAddr().(*net.UDPAddr).Port
}

type packetReader struct{ c net.PacketConn }

func (r packetReader) Read(b []byte) (int, error) { n, _, err := r.c.ReadFrom(b); return n, err }

func readerOf(c net.PacketConn) io.Reader { return packetReader{c} }

// A server that never answers: the request's timeout (the sample's 3 s)
// fails it with ETIMEDOUT before the sample gives up waiting (5 s, EINVAL),
// and the agent goes on serving the next request. The agent answers by the
// request's timeout even when its handshake runs late (a loaded machine):
// the sample's own 5 s wait, counted from the request, must never end first.
func TestSampleTimeout(t *testing.T) {
	ko := samplePath(t)
	a, logs := listen(t, sampleAgentConfig(t))
	serve(t, a)
	start := time.Now()
	err, lines := runSample(t, ko, fmt.Sprintf("role=client ip=127.0.0.1 port=%d", blackHole(t)))
	took := time.Since(start)
	if !errors.Is(err, unix.ETIMEDOUT) {
		t.Fatalf("insmod against a silent peer: %v (after %v), want ETIMEDOUT", err, took)
	}
	if took < 3*time.Second {
		t.Errorf("failed after %v, before the request's 3s timeout", took)
	}
	// The errno is the init's (the agent's status), and the error says so.
	var le *kmod.LoadError
	if !errors.As(err, &le) || !le.InitRan || !strings.Contains(err.Error(), "module's own init") {
		t.Errorf("the error does not say that the module's init returned it: %v", err)
	}
	for _, l := range lines {
		if strings.Contains(l, "handshake completed") {
			t.Errorf("kernel log: %s", l)
		}
	}
	if len(logs.find("handshake failed", "status=ETIMEDOUT")) != 1 {
		t.Error("the agent logged no timeout failure")
	}
	// Still serving.
	port, _ := quicServer(t, "sample", 1)
	if err, _ := runSample(t, ko, fmt.Sprintf("role=client ip=127.0.0.1 port=%d", port)); err != nil {
		t.Errorf("the next request: %v", err)
	}
}

// SIGTERM's path: Serve's context ends while a handshake is in flight; the
// request is still answered (here with its timeout) before Serve returns,
// so the consumer never waits for the kernel's own expiry.
func TestSampleShutdownInFlight(t *testing.T) {
	ko := samplePath(t)
	a, logs := listen(t, sampleAgentConfig(t))
	stop := serve(t, a)
	errc := make(chan error, 1)
	go func() {
		err, _ := runSample(t, ko, fmt.Sprintf("role=client ip=127.0.0.1 port=%d", blackHole(t)))
		errc <- err
	}()
	// Wait until the request is in flight: the agent has taken it and the
	// handshake runs (the sample logs nothing before its result).
	deadline := time.Now().Add(20 * time.Second)
	for a.active.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the agent")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if len(logs.find("handshake failed", "status=ETIMEDOUT")) != 1 {
		t.Error("Serve returned before the in-flight request was answered")
	}
	if err := <-errc; !errors.Is(err, unix.ETIMEDOUT) {
		t.Errorf("insmod: %v, want the agent's ETIMEDOUT", err)
	}
}
