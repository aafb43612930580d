//go:build linux

package tlsagent

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/testcerts"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// testAgent is an agent without netlink, for its request handler.
func testAgent(t *testing.T, cfg *Config) *Agent {
	t.Helper()
	a, err := newAgent(cfg, slog.New(slog.NewTextHandler(tWriter{t}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// serverConfig is a Config with the test certificates in both roles.
func serverConfig(t *testing.T) *Config {
	t.Helper()
	c := &Config{
		Client: Side{TrustStore: testcerts.Path("ca.pem")},
		Server: Side{TrustStore: testcerts.Path("ca.pem"), Certificate: testcerts.Path("server.pem"), PrivateKey: testcerts.Path("server-key.pem")},
	}
	return c
}

func wantStatus(t *testing.T, res result, status unix.Errno, msg string) {
	t.Helper()
	if res.status != uint32(status) {
		t.Fatalf("status %s (%v), want %s", errnoName(res.status), res.err, unix.ErrnoName(status))
	}
	if status != 0 && (res.err == nil || !strings.Contains(res.err.Error(), msg)) {
		t.Fatalf("error %v, want one saying %q", res.err, msg)
	}
	if res.release != nil {
		res.release()
	}
}

// The request names a socket of another kind: the handler refuses it
// without touching it.
func TestHandleWrongSocket(t *testing.T) {
	a := testAgent(t, nil)
	for _, tc := range []struct {
		name               string
		domain, typ, proto int
		want               string
	}{
		{"udp", unix.AF_INET, unix.SOCK_DGRAM, 0, "neither QUIC nor TCP (SO_PROTOCOL 17)"},
		{"unix", unix.AF_UNIX, unix.SOCK_STREAM, 0, "neither QUIC nor TCP (SO_PROTOCOL 0)"},
		{"udp6", unix.AF_INET6, unix.SOCK_DGRAM, unix.IPPROTO_UDP, "neither QUIC nor TCP (SO_PROTOCOL 17)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, err := unix.Socket(tc.domain, tc.typ|unix.SOCK_CLOEXEC, tc.proto)
			if err != nil {
				t.Fatalf("make a %s socket: %v", tc.name, err)
			}
			defer unix.Close(fd)
			res := a.handle(context.Background(), &Request{FD: fd, Type: MessageTypeClientHello, Auth: AuthX509})
			wantStatus(t, res, unix.EOPNOTSUPP, tc.want)
			if _, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err != nil {
				t.Errorf("the socket was closed by the handler: %v", err)
			}
		})
	}
	// Not a socket at all.
	p := make([]int, 2)
	if err := unix.Pipe2(p, unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	wantStatus(t, a.handle(context.Background(), &Request{FD: p[0], Type: MessageTypeClientHello, Auth: AuthX509}), unix.EBADF, "SO_PROTOCOL")
}

// tcpPair is a connected loopback TCP pair: the consumer's end and the peer's.
func tcpPair(t *testing.T) (consumer *net.TCPConn, peer net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*net.TCPConn), s
}

func connFD(t *testing.T, c *net.TCPConn) int {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd int
	raw.Control(func(f uintptr) { fd = int(f) })
	return fd
}

func TestHandleBadRequest(t *testing.T) {
	a := testAgent(t, nil)
	c, _ := tcpPair(t)
	fd := connFD(t, c)
	wantStatus(t, a.handle(context.Background(), &Request{FD: fd, Type: MessageTypeClientHello, Auth: 9}), unix.EINVAL, "unknown auth mode 9")
	wantStatus(t, a.handle(context.Background(), &Request{FD: fd, Type: MessageTypeClientHello, Auth: AuthUnspec}), unix.EINVAL, "unknown auth mode 0")
	wantStatus(t, a.handle(context.Background(), &Request{FD: fd, Type: 7, Auth: AuthX509}), unix.EINVAL, "unknown handshake message type 7")
	// A server with no certificate configured.
	wantStatus(t, a.handle(context.Background(), &Request{FD: fd, Type: MessageTypeServerHello, Auth: AuthX509}), unix.ENOKEY, "the server role has no certificate")
}

// addKey puts a user key in the agent's keyring, removed at the end.
func addKey(t *testing.T, desc string, payload []byte) int32 {
	t.Helper()
	id, err := unix.AddKey("user", desc, payload, agentKeyring)
	if err != nil {
		if errors.Is(err, unix.ENOSYS) {
			t.Skip("the kernel has no keys (CONFIG_KEYS)")
		}
		t.Fatalf("add_key: %v", err)
	}
	t.Cleanup(func() { unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0) })
	return int32(id)
}

// Key serials from the request are read from the real keyring; one that
// does not exist fails the request with ENOKEY, naming the serial.
func TestHandleKeys(t *testing.T) {
	a := testAgent(t, nil)
	c, _ := tcpPair(t)
	fd := connFD(t, c)
	key := bytes.Repeat([]byte{0x5a}, 32)
	id := addKey(t, "kquic-test-psk", key)
	p, err := loadPSK(id)
	if err != nil {
		t.Fatal(err)
	}
	if p.identity != "kquic-test-psk" || !bytes.Equal(p.key, key) {
		t.Errorf("PSK %d read as identity %q key %x", id, p.identity, p.key)
	}
	// A PSK that exists: the handshake itself is what crypto/tls lacks.
	wantStatus(t, a.handle(context.Background(), &Request{FD: fd, Type: MessageTypeClientHello, Auth: AuthPSK, PeerIDs: []int32{id}}), unix.EOPNOTSUPP, "external PSK")

	gone := addKey(t, "kquic-test-gone", key)
	if _, err := unix.KeyctlInt(unix.KEYCTL_INVALIDATE, int(gone), 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	// The kernel's garbage collector removes an invalidated key
	// asynchronously: until then it reads as EKEYREVOKED or ENOKEY.
	res := a.handle(context.Background(), &Request{FD: fd, Type: MessageTypeClientHello, Auth: AuthPSK, PeerIDs: []int32{gone}})
	if res.status != uint32(unix.ENOKEY) && res.status != uint32(unix.EKEYREVOKED) {
		t.Fatalf("status %s (%v), want ENOKEY", errnoName(res.status), res.err)
	}
	if !strings.Contains(res.err.Error(), "PSK key "+strconv.Itoa(int(gone))) {
		t.Errorf("error %v does not name key %d", res.err, gone)
	}
	// A serial that names no key.
	none := absentSerial(t)
	wantStatus(t, a.handle(context.Background(), &Request{FD: fd, Type: MessageTypeClientHello, Auth: AuthPSK, PeerIDs: []int32{none}}), unix.ENOKEY, "PSK key "+strconv.Itoa(int(none)))
	wantStatus(t, a.handle(context.Background(), &Request{FD: fd, Type: MessageTypeClientHello, Auth: AuthPSK}), unix.ENOKEY, "names no key")
	wantStatus(t, a.handle(context.Background(), &Request{FD: fd, Type: MessageTypeServerHello, Auth: AuthX509, CertSerial: none, KeySerial: none}), unix.ENOKEY, "certificate key "+strconv.Itoa(int(none)))
	// A key pair from the keyring: a certificate and key in PEM.
	certPEM, keyPEM := readFile(t, testcerts.Path("server.pem")), readFile(t, testcerts.Path("server-key.pem"))
	kp, err := loadKeyPair(addKey(t, "kquic-test-cert", certPEM), addKey(t, "kquic-test-key", keyPEM))
	if err != nil {
		t.Fatal(err)
	}
	if kp.Leaf == nil || kp.PrivateKey == nil || kp.Leaf.VerifyHostname("server.test") != nil {
		t.Errorf("key pair from the keyring: %+v", kp)
	}
	if _, err := loadKeyPair(addKey(t, "kquic-test-junk", []byte("junk")), addKey(t, "kquic-test-key2", keyPEM)); err == nil {
		t.Error("a certificate key holding junk loaded")
	}
}

// TCP, server role: the agent handshakes on the consumer's socket and hands
// the keys to the kernel; the consumer then reads and writes plaintext on its
// own socket while the peer speaks TLS.
func TestHandleTCPServer(t *testing.T) {
	testenv.Require(t, kmod.FeatureTLS)
	a := testAgent(t, serverConfig(t))
	consumer, peer := tcpPair(t)
	pool, err := testcerts.Pool()
	if err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(peer, &tls.Config{RootCAs: pool, ServerName: "server.test", MinVersion: tls.VersionTLS13})
	hs := make(chan error, 1)
	go func() { hs <- tc.Handshake() }()
	res := a.handle(context.Background(), &Request{FD: connFD(t, consumer), Type: MessageTypeServerHello, Auth: AuthX509, Timeout: 20 * time.Second})
	if res.status != 0 {
		t.Fatalf("status %s: %v", errnoName(res.status), res.err)
	}
	res.release()
	if err := <-hs; err != nil {
		t.Fatalf("peer handshake: %v", err)
	}
	t.Logf("agent: %s", res.summary)
	// The consumer's socket now carries kernel TLS both ways.
	if _, err := consumer.Write([]byte("from the consumer")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	tc.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := tc.Read(buf)
	if err != nil || string(buf[:n]) != "from the consumer" {
		t.Fatalf("peer read %q, %v", buf[:n], err)
	}
	if _, err := tc.Write([]byte("from the peer")); err != nil {
		t.Fatal(err)
	}
	consumer.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err = consumer.Read(buf)
	if err != nil || string(buf[:n]) != "from the peer" {
		t.Fatalf("consumer read %q, %v", buf[:n], err)
	}
}

// TCP, client role: verification is on by default (the system's roots do
// not know the test CA); with the configured trust store it succeeds.
func TestHandleTCPClient(t *testing.T) {
	testenv.Require(t, kmod.FeatureTLS)
	cert, err := testcerts.Server()
	if err != nil {
		t.Fatal(err)
	}
	run := func(cfg *Config, name string) (result, error) {
		a := testAgent(t, cfg)
		consumer, peer := tcpPair(t)
		ts := tls.Server(peer, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13})
		hs := make(chan error, 1)
		go func() { hs <- ts.Handshake() }()
		res := a.handle(context.Background(), &Request{FD: connFD(t, consumer), Type: MessageTypeClientHello, Auth: AuthX509, PeerName: name, Timeout: 20 * time.Second})
		if res.release != nil {
			res.release()
		}
		if res.status != 0 {
			peer.Close()
		}
		return res, <-hs
	}
	res, _ := run(nil, "server.test")
	if res.status != uint32(unix.EACCES) || !strings.Contains(res.err.Error(), "certificate") {
		t.Fatalf("unknown CA: status %s (%v), want EACCES for the certificate", errnoName(res.status), res.err)
	}
	res, _ = run(serverConfig(t), "wrong.test")
	if res.status != uint32(unix.EACCES) || !strings.Contains(res.err.Error(), "wrong.test") {
		t.Fatalf("wrong name: status %s (%v), want EACCES naming wrong.test", errnoName(res.status), res.err)
	}
	res, err = run(serverConfig(t), "server.test")
	if res.status != 0 || err != nil {
		t.Fatalf("status %s (%v), peer %v", errnoName(res.status), res.err, err)
	}
	t.Logf("agent: %s, peer identity keys %v", res.summary, res.remote)
}

// A peer that never answers: the request's own timeout fails it with
// ETIMEDOUT.
func TestHandleTCPTimeout(t *testing.T) {
	a := testAgent(t, serverConfig(t))
	consumer, peer := tcpPair(t)
	go io.Copy(io.Discard, peer) // reads the ClientHello, answers nothing
	start := time.Now()
	res := a.handle(context.Background(), &Request{FD: connFD(t, consumer), Type: MessageTypeClientHello, Auth: AuthX509, PeerName: "server.test", Timeout: 300 * time.Millisecond})
	took := time.Since(start)
	wantStatus(t, res, unix.ETIMEDOUT, "")
	if took < 300*time.Millisecond {
		t.Errorf("failed after %v, before the 300ms timeout", took)
	}
}

// absentSerial returns a key serial that names no key now.
func absentSerial(t *testing.T) int32 {
	t.Helper()
	for s := int32(0x7ffffff0); s > 0x7fffff00; s-- {
		if _, err := unix.KeyctlString(unix.KEYCTL_DESCRIBE, int(s)); errors.Is(err, unix.ENOKEY) {
			return s
		}
	}
	t.Fatal("no absent key serial found")
	return 0
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Without kernel TLS a TCP handshake cannot be handed to the consumer: the
// request fails with EOPNOTSUPP, saying so. (Where the kernel has TLS, the
// tests above run instead.)
func TestHandleTCPNoKernelTLS(t *testing.T) {
	if kmod.Probe(kmod.FeatureTLS) == nil {
		t.Skip("this kernel has TLS: TestHandleTCPServer covers the handshake")
	}
	a := testAgent(t, serverConfig(t))
	consumer, peer := tcpPair(t)
	pool, err := testcerts.Pool()
	if err != nil {
		t.Fatal(err)
	}
	go tls.Client(peer, &tls.Config{RootCAs: pool, ServerName: "server.test", MinVersion: tls.VersionTLS13}).Handshake()
	res := a.handle(context.Background(), &Request{FD: connFD(t, consumer), Type: MessageTypeServerHello, Auth: AuthX509, Timeout: 20 * time.Second})
	peer.Close()
	wantStatus(t, res, unix.EOPNOTSUPP, "kernel TLS")
}
