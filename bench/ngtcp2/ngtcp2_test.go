//go:build linux

package ngtcp2

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/transport"
	"kquic.dev/internal/testenv"
)

// The arguments do what the benchmarks count on, with the real programs
// over loopback: the server generates a body of N bytes for /N, the client
// fetches each URL over one connection, and posts a file's bytes with
// data.
func TestProgramsServeGeneratedBodies(t *testing.T) {
	cli, srv, err := Programs()
	if err != nil {
		testenv.Tool(t, "gtlsclient", "ngtcp2-client")
		testenv.Tool(t, "gtlsserver", "ngtcp2-server")
	}
	dir := t.TempDir()
	certPEM, keyPEM, err := transport.CertificatePEM()
	if err != nil {
		t.Fatal(err)
	}
	cert, key, root, dl := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "root"), filepath.Join(dir, "dl")
	os.WriteFile(cert, certPEM, 0o600)
	os.WriteFile(key, keyPEM, 0o600)
	os.Mkdir(root, 0o755)
	os.Mkdir(dl, 0o755)
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	addr := netip.MustParseAddr("127.0.0.1")
	c := matrix.Cell{MTU: 1500, GSO: false, CC: "cubic"}
	var srvOut bytes.Buffer
	s := exec.Command(srv, ServerArgs(c, root, addr, port, key, cert)...)
	s.Stdout, s.Stderr = &srvOut, &srvOut
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { s.Process.Kill(); s.Wait() }()
	if err := waitUDP(port); err != nil {
		t.Fatalf("%v; the server's output: %s", err, srvOut.String())
	}
	qlog := filepath.Join(dir, "q.qlog")
	args := append([]string{"--download", dl, "--qlog-file", qlog}, ClientArgs(c, addr, port, "", []string{"/3000000", "/7"})...)
	t0 := time.Now()
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("gtlsclient %v: %v: %s", args, err, out)
	}
	wall := time.Since(t0)
	// The request to the last byte of the response, by the client's qlog:
	// within the run, and as long as a millisecond at least.
	q, err := os.ReadFile(qlog)
	if err != nil {
		t.Fatal(err)
	}
	span, err := StreamSpan(q, 0)
	if err != nil || span <= 0 || span > wall {
		t.Errorf("the qlog's span of stream 0: %v (%v), the run took %v", span, err, wall)
	}
	if _, err := StreamSpan(q, 99); err == nil {
		t.Errorf("a span of stream 99, which the run did not open")
	}
	t.Logf("3 MB in %v by the qlog, the run %v", span, wall)
	for name, want := range map[string]int64{"3000000": 3000000, "7": 7} {
		st, err := os.Stat(filepath.Join(dl, name))
		if err != nil || st.Size() != want {
			t.Errorf("/%s: %v, size %d, want %d bytes", name, err, st.Size(), want)
		}
	}
	body := filepath.Join(dir, "body")
	if err := WriteBody(body, 3<<20); err != nil {
		t.Fatal(err)
	}
	args = ClientArgs(c, addr, port, body, []string{"/1"})
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("gtlsclient %v: %v: %s", args, err, out)
	}
}

func waitUDP(port int) error {
	suffix := fmt.Sprintf(":%04X", port)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile("/proc/net/udp")
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) > 1 && strings.HasSuffix(f[1], suffix) {
				return nil
			}
		}
	}
	return fmt.Errorf("gtlsserver does not listen on UDP port %d after 10s", port)
}
