package http3_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kmod/vm"
	"kquic.dev/kquic"
	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

// exampleBinsEnv names, in the guest TestQuicGoExamplesKernel starts, the
// programs it built on the host: the ported server and client and quic-go's
// server and client, comma-separated.
const exampleBinsEnv = "KQUIC_TEST_QUICGO_EXAMPLES"

// exampleProgram is one of the four programs TestQuicGoExamples runs.
type exampleProgram struct {
	name, pkg string
	ported    bool // this package's port, else quic-go's own
	bin       string
}

// examplePrograms returns the four programs: built (one build, which runs
// over kernel QUIC where the module is loaded and quic-go elsewhere), or
// the binaries named by $KQUIC_TEST_QUICGO_EXAMPLES.
func examplePrograms(t *testing.T) []*exampleProgram {
	t.Helper()
	progs := []*exampleProgram{
		{name: "the ported server", pkg: "kquic.dev/quicnet/http3/" + portDir + "/server", ported: true},
		{name: "the ported client", pkg: "kquic.dev/quicnet/http3/" + portDir + "/client", ported: true},
		{name: "quic-go's server", pkg: quicGoModule + "/example"},
		{name: "quic-go's client", pkg: quicGoModule + "/example/client"},
	}
	if env := os.Getenv(exampleBinsEnv); env != "" {
		bins := strings.Split(env, ",")
		if len(bins) != len(progs) {
			t.Fatalf("$%s=%q: want %d binaries", exampleBinsEnv, env, len(progs))
		}
		for i, p := range progs {
			p.bin = bins[i]
		}
		return progs
	}
	var wg sync.WaitGroup
	for _, p := range progs {
		wg.Go(func() { p.bin = testenv.GoBuild(t, p.pkg) })
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return progs
}

// TestQuicGoExamples runs quic-go's example server and client, ported by
// their imports (testdata/quicgoexample, TestQuicGoExamplePort), against
// quic-go's own, unmodified and built from the module cache, on loopback:
// the ported server serves quic-go's client, the ported client fetches
// from quic-go's server, and the two ported programs talk to each other;
// the ported server also runs with -tcp, where http3.ListenAndServeTLS
// serves HTTPS over TCP beside HTTP/3 and announces it, as quic-go's does.
// The client fetches two sizes of the server's generated data at once
// and prints the bodies, checked byte for byte; the server prints the
// requests it served.
//
// On the host the ported programs run over quic-go. Over kernel QUIC they
// run in the guest TestQuicGoExamplesKernel boots, which runs this test
// there with the same programs, built on the host once, and the QUIC
// module's counters must show the ported ends' connections; in the guests
// of make test's passes it is left to that test, as building the four
// programs under emulation takes minutes.
func TestQuicGoExamples(t *testing.T) {
	kernel := os.Getenv(exampleBinsEnv) != ""
	if kernel {
		testenv.Require(t, kmod.FeatureQUIC)
	} else {
		if vm.InGuest() {
			t.Skip("TestQuicGoExamplesKernel runs it over kernel QUIC, in a guest of its own with the programs built on the host: building them under emulation takes minutes")
		}
		requireImpl(t)
		kernel = quicnet.Implementation() == quicnet.Kernel
	}
	progs := examplePrograms(t)
	portedServer, portedClient, quicGoServer, quicGoClient := progs[0], progs[1], progs[2], progs[3]

	// quic-go's test CA, which its programs trust (the port's copy is
	// quic-go's, byte for byte: TestQuicGoExamplePort).
	caPool := x509.NewCertPool()
	ca, err := os.ReadFile(filepath.Join(portDir, "testdata", "ca.pem"))
	if err != nil || !caPool.AppendCertsFromPEM(ca) {
		t.Fatalf("quic-go's test CA: %v", err)
	}
	for _, tc := range []struct {
		server, client *exampleProgram
		tcp            bool // the server runs with -tcp
	}{
		{server: portedServer, client: quicGoClient},
		{server: quicGoServer, client: portedClient},
		{server: portedServer, client: portedClient},
		{server: portedServer, client: quicGoClient, tcp: true},
	} {
		name := tc.server.name + ", " + tc.client.name
		if tc.tcp {
			name = tc.server.name + " with -tcp, " + tc.client.name
		}
		t.Run(name, func(t *testing.T) {
			kernelServer, kernelClient := kernel && tc.server.ported, kernel && tc.client.ported
			before := quicCounters(t, kernel)
			port := freePort(t, tc.tcp)
			bind := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			args := []string{"-bind", bind}
			if tc.tcp {
				args = append(args, "-tcp")
			}
			start := time.Now()
			srv := startProgram(t, tc.server.bin, args...)
			waitListening(t, srv, "udp", port)
			if tc.tcp {
				waitListening(t, srv, "tcp", port)
			}
			listened := time.Now()

			sizes := []int{1000, 300 << 10}
			var urls []string
			for _, n := range sizes {
				urls = append(urls, fmt.Sprintf("https://localhost:%d/%d", port, n))
			}
			ctx, cancel := context.WithTimeout(ctxT(t), 3*time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, tc.client.bin, urls...).CombinedOutput()
			t.Logf("%s listened in %v; %s ran for %v", tc.server.name, listened.Sub(start).Round(time.Millisecond), tc.client.name, time.Since(listened).Round(time.Millisecond))
			if err != nil {
				t.Fatalf("%s: %v\n%s\n%s printed:\n%s", tc.client.name, err, withoutBodies(out), tc.server.name, srv.out.String())
			}
			checkClientOutput(t, out, urls, sizes)
			if tc.tcp {
				checkTCP(t, port, caPool)
			}
			srvOut := srv.out.String()
			for _, n := range sizes {
				if !strings.Contains(srvOut, `Proto:"HTTP/3.0", ProtoMajor:3, ProtoMinor:0`) || !strings.Contains(srvOut, fmt.Sprintf(`RequestURI:"/%d"`, n)) {
					t.Errorf("%s printed no HTTP/3 request for /%d:\n%s", tc.server.name, n, clip([]byte(srvOut)))
				}
			}
			after := quicCounters(t, kernel)
			if kernelServer && after["QuicConnPassiveEstabs"] <= before["QuicConnPassiveEstabs"] {
				t.Errorf("%s: the QUIC module's QuicConnPassiveEstabs stayed at %d: it did not serve over kernel QUIC", tc.server.name, before["QuicConnPassiveEstabs"])
			}
			if kernelClient && after["QuicConnActiveEstabs"] <= before["QuicConnActiveEstabs"] {
				t.Errorf("%s: the QUIC module's QuicConnActiveEstabs stayed at %d: it did not connect over kernel QUIC", tc.client.name, before["QuicConnActiveEstabs"])
			}
		})
	}
}

// TestQuicGoExamplesKernel builds the ported example programs and quic-go's
// on the host, boots a guest that loads $KQUIC_MODULE, and runs
// TestQuicGoExamples there with them: the ported server and client, the
// binaries that run over quic-go on the host, choose kernel QUIC there,
// and run against quic-go's unmodified programs and each other on the
// guest's loopback.
func TestQuicGoExamplesKernel(t *testing.T) {
	mod := os.Getenv(testenv.ModuleEnv)
	if mod == "" {
		if testenv.Required("quic") {
			t.Fatalf("$%s requires kernel QUIC, and $%s names no quic.ko", testenv.RequireEnv, testenv.ModuleEnv)
		}
		t.Skipf("needs the kernel QUIC module for the guest: $%s=/path/quic.ko", testenv.ModuleEnv)
	}
	cfg := testenv.VM(t)
	var bins []string
	for _, p := range examplePrograms(t) {
		bins = append(bins, p.bin)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	cfg.ModuleFiles = []string{mod}
	cfg.Env = append(os.Environ(), exampleBinsEnv+"="+strings.Join(bins, ","))
	cfg.Stdout, cfg.Stderr = &out, &out
	cfg.Timeout = 10 * time.Minute
	m, err := vm.Start(context.Background(), cfg, []string{self, "-test.run", "^TestQuicGoExamples$", "-test.v", "-test.count", "1"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Wait()
	log := out.full()
	t.Logf("TestQuicGoExamples in the guest:\n%s", log)
	if err != nil {
		t.Fatalf("the guest: %v", err)
	}
	if res.ExitCode != 0 || !strings.Contains(log, "--- PASS: TestQuicGoExamples ") || strings.Contains(log, "--- SKIP") {
		t.Fatalf("TestQuicGoExamples in the guest: exit status %d; want it to pass, nothing skipped", res.ExitCode)
	}
}

// quicCounters returns the QUIC module's counters where kernel QUIC runs,
// and nil elsewhere.
func quicCounters(t *testing.T, kernel bool) map[string]uint64 {
	t.Helper()
	if !kernel {
		return nil
	}
	m, err := kquic.ReadSNMP()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// prData is the example server's response to /n: its generatePRData (a
// Lehmer generator).
func prData(n int) []byte {
	res := make([]byte, n)
	seed := uint64(1)
	for i := range res {
		seed = seed * 48271 % 2147483647
		res[i] = byte(seed)
	}
	return res
}

var bodyLine = regexp.MustCompile(`Response Body \((\d+) bytes\):\n`)

// checkClientOutput checks what the example client printed: a 200 over
// HTTP/3 for each URL, with a Date (quic-go's server sends one, and so
// must this package's), and each body, which it prints whole, byte for
// byte.
func checkClientOutput(t *testing.T, out []byte, urls []string, sizes []int) {
	t.Helper()
	for _, u := range urls {
		i := bytes.Index(out, []byte("Got response for "+u+": "))
		if i < 0 {
			t.Errorf("no response for %s:\n%s", u, withoutBodies(out))
			continue
		}
		line, _, _ := bytes.Cut(out[i:], []byte("\n"))
		for _, want := range []string{`Status:"200 OK"`, `Proto:"HTTP/3.0"`, `"Date":[]string{"`} {
			if !bytes.Contains(line, []byte(want)) {
				t.Errorf("the response for %s has no %s:\n%s", u, want, line)
			}
		}
	}
	bodies := map[int][]byte{}
	for _, m := range bodyLine.FindAllSubmatchIndex(out, -1) {
		n, _ := strconv.Atoi(string(out[m[2]:m[3]]))
		if m[1]+n > len(out) {
			t.Fatalf("a body of %d bytes is cut short in the client's output", n)
		}
		bodies[n] = out[m[1] : m[1]+n]
	}
	for _, n := range sizes {
		b, ok := bodies[n]
		if !ok {
			t.Errorf("no body of %d bytes in the client's output (bodies of %v bytes):\n%s", n, keys(bodies), withoutBodies(out))
		} else if !bytes.Equal(b, prData(n)) {
			t.Errorf("the body of %d bytes is not the server's data", n)
		}
	}
}

// withoutBodies is the example client's output with the bodies it
// printed left out, for a report.
func withoutBodies(out []byte) []byte {
	var b []byte
	for {
		m := bodyLine.FindSubmatchIndex(out)
		if m == nil {
			return clip(append(b, out...))
		}
		n, _ := strconv.Atoi(string(out[m[2]:m[3]]))
		end := min(m[1]+n, len(out))
		b = append(b, out[:m[1]]...)
		b = fmt.Appendf(b, "[the %d bytes of the body]", n)
		out = out[end:]
	}
}

func keys(m map[int][]byte) []int {
	var k []int
	for n := range m {
		k = append(k, n)
	}
	return k
}

// checkTCP fetches from the example server's HTTPS over TCP (-tcp), which
// must answer over HTTP/2 and announce HTTP/3 on its port.
func checkTCP(t *testing.T, port int, pool *x509.CertPool) {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	url := fmt.Sprintf("https://localhost:%d/1000", port)
	resp, b, err := fetch(ctxT(t), &http.Client{Transport: tr}, url)
	if err != nil {
		t.Fatalf("over TCP: %v", err)
	}
	if resp.StatusCode != http.StatusOK || resp.Proto != "HTTP/2.0" || !bytes.Equal(b, prData(1000)) {
		t.Errorf("over TCP: %s %s, %d bytes; want 200 over HTTP/2.0 and the server's data", resp.Proto, resp.Status, len(b))
	}
	if got, want := resp.Header.Get("Alt-Svc"), http3.AltSvc(port, 0); got != want {
		t.Errorf("over TCP: Alt-Svc %q, want %q", got, want)
	}
}

// freePort returns a UDP port (and TCP, with tcp) free on loopback now.
func freePort(t *testing.T, tcp bool) int {
	t.Helper()
	for range 10 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := pc.LocalAddr().(*net.UDPAddr).Port
		pc.Close()
		if !tcp {
			return port
		}
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			l.Close()
			return port
		}
	}
	t.Fatal("no port free for both UDP and TCP on loopback in 10 tries")
	return 0
}

// process is a program the test runs, killed at its end.
type process struct {
	name   string
	out    *syncBuffer
	exited chan struct{} // closed when it has exited
	err    error         // its exit, once exited is closed
}

func startProgram(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	p := &process{name: filepath.Base(bin), out: &syncBuffer{}, exited: make(chan struct{})}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// waitListening waits until a socket is bound to port on loopback (or any
// address) for proto ("udp", or "tcp" listening), as /proc/net says: the
// example server prints that it listens before it does, and prints
// nothing once it does. It fails if p exits first.
func waitListening(t *testing.T, p *process, proto string, port int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		bound, err := portBound(proto, port)
		if err != nil {
			t.Fatal(err)
		}
		if bound {
			return
		}
		select {
		case <-p.exited:
			t.Fatalf("%s exited (%v) before it listened on %s port %d:\n%s", p.name, p.err, proto, port, p.out.String())
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on %s port %d within 2 minutes:\n%s", p.name, proto, port, p.out.String())
		}
	}
}

// portBound reads /proc/net/{udp,tcp}{,6} for a socket bound to port
// (listening, for TCP).
func portBound(proto string, port int) (bool, error) {
	hexPort := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/" + proto, "/proc/net/" + proto + "6"} {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return false, err
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Scan() // the header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 || !strings.HasSuffix(fields[1], hexPort) {
				continue
			}
			if proto == "udp" || fields[3] == "0A" { // TCP_LISTEN
				return true, nil
			}
		}
	}
	return false, nil
}

// syncBuffer is a bytes.Buffer for a process's output, read while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns the output, clipped.
func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(clip(s.b.Bytes()))
}

// full returns the whole output.
func (s *syncBuffer) full() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// clip keeps the start and the end of a long output (the example client
// prints whole bodies).
func clip(b []byte) []byte {
	const keep = 4 << 10
	if len(b) <= 2*keep {
		return b
	}
	return append(append(append([]byte{}, b[:keep]...), fmt.Sprintf("\n[... %d bytes ...]\n", len(b)-2*keep)...), b[len(b)-keep:]...)
}

var _ io.Writer = (*syncBuffer)(nil)
