//go:build linux

package ktls

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/testenv"
)

// Interop with OpenSSL's s_server and s_client, a TLS implementation no one
// here wrote.

type osslCase struct {
	name    string
	version uint16
	suite   uint16
	args    []string
}

var osslCases = []osslCase{
	{"TLS13-AES128GCM", tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256, []string{"-tls1_3", "-ciphersuites", "TLS_AES_128_GCM_SHA256"}},
	{"TLS13-AES256GCM", tls.VersionTLS13, tls.TLS_AES_256_GCM_SHA384, []string{"-tls1_3", "-ciphersuites", "TLS_AES_256_GCM_SHA384"}},
	{"TLS13-CHACHA20", tls.VersionTLS13, tls.TLS_CHACHA20_POLY1305_SHA256, []string{"-tls1_3", "-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256"}},
	{"TLS12-AES128GCM", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256"}},
	{"TLS12-AES256GCM", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-AES256-GCM-SHA384"}},
	{"TLS12-CHACHA20", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-CHACHA20-POLY1305"}},
}

func opensslBin(t testing.TB) string {
	t.Helper()
	return testenv.Tool(t, "openssl", "openssl")
}

// osslProc is a running openssl whose stdin is fed from a stream that
// stays open (EOF on stdin would end s_client or make s_server spin) and
// whose stdout is hashed or captured.
type osslProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr bytes.Buffer
	out    chan osslOut
}

type osslOut struct {
	sum  string
	n    int64
	text []byte // the first 64 KiB, for messages
	err  error
}

func startOpenSSL(t testing.TB, args ...string) *osslProc {
	t.Helper()
	p := &osslProc{out: make(chan osslOut, 1)}
	p.cmd = exec.Command(opensslBin(t), args...)
	p.cmd.Stderr = &p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting openssl %v: %v", args, err)
	}
	go func() {
		var head bytes.Buffer
		sum, n, err := digest(io.TeeReader(stdout, &limitWriter{&head, 64 << 10}))
		p.out <- osslOut{sum, n, head.Bytes(), err}
	}()
	t.Cleanup(func() {
		p.stdin.Close()
		p.cmd.Process.Kill()
		p.cmd.Wait()
	})
	return p
}

// wait waits for openssl to exit by itself and returns its stdout. It
// reads stdout to its end first: Wait closes the pipe once the process has
// exited, and a read still under way then loses what the pipe held
// ("read |0: file already closed", 48 KiB short of 1 GiB).
func (p *osslProc) wait(t testing.TB, timeout time.Duration) osslOut {
	t.Helper()
	deadline := time.After(timeout)
	var out osslOut
	select {
	case out = <-p.out:
	case <-deadline:
		p.cmd.Process.Kill()
		t.Fatalf("openssl did not close its output within %v; stderr:\n%s", timeout, p.stderr.String())
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		p.stdin.Close()
		if err != nil {
			t.Errorf("openssl exited with %v; stderr:\n%s", err, p.stderr.String())
		}
	case <-deadline:
		p.cmd.Process.Kill()
		t.Fatalf("openssl did not exit within %v; stderr:\n%s", timeout, p.stderr.String())
	}
	return out
}

type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		m := min(len(p), l.n)
		l.w.Write(p[:m])
		l.n -= m
	}
	return len(p), nil
}

func freePort(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// osslLoad shapes an exchange beyond its sizes: the size of our end's
// writes (each one record; 0: io.Copy's 32 KiB), more openssl arguments,
// and the least record sequence number our kernel must have reached in each
// direction by the end (getsockopt TLS_TX/TLS_RX; 0: not checked).
type osslLoad struct {
	writeSize    int
	peerArgs     []string
	minTX, minRX uint64
}

// osslServerRun: our kTLS client uploads up bytes to s_server (which prints
// them) and downloads down bytes that s_server reads from its stdin.
func osslServerRun(t testing.TB, oc osslCase, up, down int64, load osslLoad) {
	dir := t.TempDir()
	_, cert, key := getPKI(t).writePEM(t, dir)
	port := freePort(t)
	args := append([]string{"s_server", "-accept", "127.0.0.1:" + port, "-cert", cert, "-key", key, "-naccept", "1", "-quiet"}, oc.args...)
	args = append(args, load.peerArgs...)
	p := startOpenSSL(t, args...)
	go io.Copy(p.stdin, stream(20, down))

	var nc net.Conn
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if nc, err = net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("s_server did not listen: %v; stderr:\n%s", err, p.stderr.String())
	}
	k, err := Client(testCtx(t), nc, kconfig(clientConfig(t, oc.version)))
	if err != nil {
		t.Fatalf("%v; s_server stderr:\n%s", err, p.stderr.String())
	}
	defer k.Close()
	osslExchange(t, k, p, oc, "s_server", 10, up, 20, down, load)
}

// osslClientRun: s_client uploads up bytes from its stdin to our kTLS
// server, which answers with down bytes that s_client prints.
func osslClientRun(t testing.TB, oc osslCase, up, down int64, load osslLoad) {
	dir := t.TempDir()
	ca, _, _ := getPKI(t).writePEM(t, dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	args := append([]string{"s_client", "-connect", ln.Addr().String(), "-CAfile", ca, "-servername", "server.test",
		"-verify_return_error", "-verify_hostname", "server.test", "-quiet"}, oc.args...)
	args = append(args, load.peerArgs...)
	p := startOpenSSL(t, args...)
	go io.Copy(p.stdin, stream(30, up))
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(30 * time.Second))
	nc, err := ln.Accept()
	if err != nil {
		t.Fatalf("s_client did not connect: %v; stderr:\n%s", err, p.stderr.String())
	}
	k, err := Server(testCtx(t), nc, kconfig(serverConfig(t, oc.version)))
	if err != nil {
		t.Fatalf("%v; s_client stderr:\n%s", err, p.stderr.String())
	}
	defer k.Close()
	osslExchange(t, k, p, oc, "s_client", 40, down, 30, up, load)
}

// osslExchange checks the cipher suite of k, then sends send bytes of
// stream(sendSeed) to the openssl peer while reading recv bytes of
// stream(recvSeed) from it, closes k (close_notify makes the peer exit) and
// checks what the peer printed, all by SHA-256. Before the close it checks
// the kernel's record sequence numbers against load.
func osslExchange(t testing.TB, k *Conn, p *osslProc, oc osslCase, peer string, sendSeed uint64, send int64, recvSeed uint64, recv int64, load osslLoad) {
	t.Helper()
	checkKernel(t, k)
	if cs := k.ConnectionState().CipherSuite; cs != oc.suite {
		t.Fatalf("negotiated %s, want %s", tls.CipherSuiteName(cs), tls.CipherSuiteName(oc.suite))
	}
	errc := make(chan error, 1)
	go func() {
		var err error
		if load.writeSize > 0 {
			_, err = io.CopyBuffer(writerOnly{k}, stream(sendSeed, send), make([]byte, load.writeSize))
		} else {
			_, err = io.Copy(k, stream(sendSeed, send))
		}
		errc <- err
	}()
	got, n, err := digest(io.LimitReader(k, recv))
	want, _, _ := digest(stream(recvSeed, recv))
	if err != nil || n != recv || got != want {
		t.Fatalf("from %s: %d bytes, %v, sha256 %s, want %d bytes %s; stderr:\n%s", peer, n, err, got, recv, want, p.stderr.String())
	}
	if err := <-errc; err != nil {
		t.Fatalf("to %s: %v", peer, err)
	}
	if (load.minTX > 0 || load.minRX > 0) && k.KernelTLS() {
		tx, rx := kernelRecordSeqs(t, k)
		if tx < load.minTX || rx < load.minRX {
			t.Fatalf("the kernel's record sequence numbers reached %d sent and %d received, want at least %d and %d", tx, rx, load.minTX, load.minRX)
		}
		t.Logf("record sequence numbers: %d sent (%#x), %d received (%#x)", tx, tx, rx, rx)
	}
	k.Close()
	out := p.wait(t, 2*time.Minute)
	want, _, _ = digest(stream(sendSeed, send))
	if out.err != nil || out.n != send || out.sum != want {
		t.Fatalf("%s printed %d bytes, sha256 %s, want %d bytes %s (%v)", peer, out.n, out.sum, send, want, out.err)
	}
	t.Logf("%s: %d bytes sent, %d received, hashes match; stats %+v", tls.CipherSuiteName(oc.suite), send, recv, k.Stats())
}

// osslSuiteLoad is each suite's exchange in TestOpenSSLServer and
// TestOpenSSLClient: 320 records of 4 KiB each way (our writes of 4 KiB, and
// OpenSSL's -max_send_frag 4096), so that in every suite and role the record
// sequence number carries into its second byte, as the 8 MiB each way of
// 16 KiB records (512 records) these tests moved before did, in a sixth of
// the bytes. Full-size records are TestOpenSSLRecordSequence's download,
// TestRoundTrip's and TestSendfile's.
var osslSuiteLoad = osslLoad{writeSize: 4 << 10, peerArgs: []string{"-max_send_frag", "4096"}, minTX: 320, minRX: 320}

const osslSuiteBytes = 320 * 4 << 10

func TestOpenSSLServer(t *testing.T) {
	requireKTLS(t)
	for _, oc := range osslCases {
		t.Run(oc.name, func(t *testing.T) { osslServerRun(t, oc, osslSuiteBytes, osslSuiteBytes, osslSuiteLoad) })
	}
}

func TestOpenSSLClient(t *testing.T) {
	requireKTLS(t)
	for _, oc := range osslCases {
		t.Run(oc.name, func(t *testing.T) { osslClientRun(t, oc, osslSuiteBytes, osslSuiteBytes, osslSuiteLoad) })
	}
}

// TestOpenSSLRecordSequence: kernel TLS and OpenSSL agree on record
// sequence numbers past 2^16 in each direction, the carry into their third
// byte, which a nonce built from a wrongly sized or wrongly ordered counter
// would break. It is what the 1 GiB transfer each way this test replaced
// proved: 1 GiB in 16 KiB records is 65,536 records, the sequence number just
// past 2^16. Here 2^16+4,096 records each way do it in small records: our
// kTLS client writes them 64 bytes each (one record per write) to s_server
// (4.3 MiB), and s_client sends them to our kTLS server in records of 512
// bytes, OpenSSL's least -max_send_frag (34 MiB). The kernel's own counters
// (getsockopt TLS_TX, TLS_RX) show that the sequence passed 2^16; the
// SHA-256 of every byte shows that both ends agreed all the way.
func TestOpenSSLRecordSequence(t *testing.T) {
	requireKTLS(t)
	if testFallback() {
		t.Skip("the record sequence numbers are the kernel's")
	}
	const records = 1<<16 + 4096
	oc := osslCases[0]
	t.Run("ktls-client-sends", func(t *testing.T) {
		osslServerRun(t, oc, records*64, 64<<10, osslLoad{writeSize: 64, minTX: records})
	})
	t.Run("ktls-server-receives", func(t *testing.T) {
		osslClientRun(t, oc, records*512, 64<<10, osslLoad{peerArgs: []string{"-max_send_frag", "512"}, minRX: records})
	})
}

// kernelRecordSeqs reads the record sequence numbers the kernel will use
// next in each direction (rec_seq of getsockopt SOL_TLS TLS_TX and TLS_RX).
func kernelRecordSeqs(t testing.TB, k *Conn) (tx, rx uint64) {
	t.Helper()
	get := func(opt int) uint64 {
		var ci *cryptoInfo
		var gerr error
		err := k.raw.Control(func(fd uintptr) {
			buf := make([]byte, k.suite.kernel.size()) // the kernel wants the cipher's exact size
			n := uint32(len(buf))
			_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, fd, solTLS, uintptr(opt), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)), 0)
			if e != 0 {
				gerr = e
				return
			}
			ci, gerr = unmarshalCryptoInfo(buf[:n])
		})
		if err == nil {
			err = gerr
		}
		if err != nil {
			t.Fatalf("getsockopt(SOL_TLS, %d): %v", opt, err)
		}
		ci.wipe()
		return ci.recSeq
	}
	return get(optTLSTX), get(optTLSRX)
}

// TestOpenSSLKeyUpdate: s_client's "K" command sends KeyUpdate with
// update_requested; our server must rekey its receive side, answer with its
// own KeyUpdate, and keep both directions working; then we start one.
func TestOpenSSLKeyUpdate(t *testing.T) {
	requireKTLS(t)
	if testFallback() {
		t.Skip("KeyUpdate needs kernel TLS")
	}
	dir := t.TempDir()
	ca, _, _ := getPKI(t).writePEM(t, dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Interactive (no -quiet, no -ign_eof) so command letters work.
	p := startOpenSSL(t, "s_client", "-connect", ln.Addr().String(), "-CAfile", ca, "-servername", "server.test",
		"-verify_return_error", "-tls1_3", "-ciphersuites", "TLS_AES_256_GCM_SHA384")
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	k, err := Server(testCtx(t), nc, kconfig(serverConfig(t, tls.VersionTLS13)))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	checkKernel(t, k)
	k.SetReadDeadline(time.Now().Add(time.Minute))
	br := bufio.NewReader(k)
	line := func(send string) string {
		if _, err := io.WriteString(p.stdin, send); err != nil {
			t.Fatal(err)
		}
		s, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading %q: %v; stats %+v; s_client stderr:\n%s", send, err, k.Stats(), p.stderr.String())
		}
		return s
	}
	if got := line("hello before\n"); got != "hello before\n" {
		t.Fatalf("got %q", got)
	}
	io.WriteString(p.stdin, "K\n") // a command line, not data
	time.Sleep(2 * time.Second)    // keep it a separate read of s_client's stdin
	if got := line("hello after\n"); got != "hello after\n" {
		t.Fatalf("got %q", got)
	}
	if st := k.Stats(); st.KeyUpdatesReceived != 1 || st.KeyUpdatesSent != 1 {
		t.Fatalf("stats %+v: want one KeyUpdate received and one sent in answer", st)
	}
	if _, err := io.WriteString(k, "reply one\n"); err != nil {
		t.Fatal(err)
	}
	if err := k.KeyUpdate(true); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(k, "reply two\n"); err != nil {
		t.Fatal(err)
	}
	if got := line("hello last\n"); got != "hello last\n" { // under OpenSSL's second new key
		t.Fatalf("got %q", got)
	}
	k.Close()
	out := p.wait(t, time.Minute)
	for _, want := range []string{"reply one\n", "reply two\n"} {
		if !strings.Contains(string(out.text), want) {
			t.Errorf("s_client output lacks %q:\n%s", want, out.text)
		}
	}
	t.Logf("stats %+v", k.Stats())
}

var _ sync.Mutex
var _ = fmt.Sprint
