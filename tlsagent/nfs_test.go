//go:build linux

package tlsagent

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/testcerts"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// hasFilesystem reports whether the kernel has a filesystem type now.
func hasFilesystem(name string) bool {
	f, err := os.Open("/proc/filesystems")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 0 && fields[len(fields)-1] == name {
			return true
		}
	}
	return false
}

// readRecord reads one RPC record (RFC 5531 record marking, one fragment).
func readRecord(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:]) &^ (1 << 31)
	if n > 1<<20 {
		return nil, fmt.Errorf("RPC record of %d bytes", n)
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

// answerProbe reads the NFS client's RPC-with-TLS probe (a NULL call with
// AUTH_TLS credentials) and answers STARTTLS (RFC 9289 §4.1).
func answerProbe(c net.Conn) error {
	probe, err := readRecord(c)
	if err != nil {
		return fmt.Errorf("read the probe: %w", err)
	}
	// xid, CALL, rpcvers 2, prog, vers, proc NULL, cred AUTH_TLS (7).
	if len(probe) < 32 || binary.BigEndian.Uint32(probe[4:]) != 0 || binary.BigEndian.Uint32(probe[20:]) != 0 || binary.BigEndian.Uint32(probe[24:]) != 7 {
		return fmt.Errorf("the first call is not a NULL with AUTH_TLS: % x", probe)
	}
	// REPLY, MSG_ACCEPTED, verifier AUTH_NONE "STARTTLS", SUCCESS.
	var reply []byte
	reply = binary.BigEndian.AppendUint32(reply, binary.BigEndian.Uint32(probe[0:]))
	reply = binary.BigEndian.AppendUint32(reply, 1)
	reply = binary.BigEndian.AppendUint32(reply, 0)
	reply = binary.BigEndian.AppendUint32(reply, 0)
	reply = binary.BigEndian.AppendUint32(reply, 8)
	reply = append(reply, "STARTTLS"...)
	reply = binary.BigEndian.AppendUint32(reply, 0)
	rec := binary.BigEndian.AppendUint32(nil, 1<<31|uint32(len(reply)))
	_, err = c.Write(append(rec, reply...))
	return err
}

// The kernel's NFS client as the TCP consumer: a mount with xprtsec=tls
// probes the server with an RPC NULL call carrying AUTH_TLS (RFC 9289), and on
// the server's STARTTLS answer asks the agent for the handshake
// (tls_client_hello_anon) on its own TCP socket. The server end here is this
// test: it answers the probe, runs the TLS handshake with crypto/tls, and
// then reads the client's first NFS call through TLS, which the kernel
// encrypted with the keys the agent handed it (kTLS). The test serves no
// NFS beyond that: the mount then fails, as it should.
func TestNFSClientXprtsecTLS(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureTLS)
	if !hasFilesystem("nfs4") {
		t.Skip("needs the kernel's NFSv4 client (CONFIG_NFS_V4; in the guest: kqbench vm --load nfsv4)")
	}
	a, logs := listen(t, nil)
	serve(t, a)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	cert, err := testcerts.Server()
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		call []byte // the first RPC call read through TLS
		err  error
	}
	got := make(chan outcome, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- outcome{err: err}
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(60 * time.Second))
		if err := answerProbe(c); err != nil {
			got <- outcome{err: err}
			return
		}
		tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13})
		if err := tc.Handshake(); err != nil {
			got <- outcome{err: fmt.Errorf("TLS handshake with the kernel's socket: %w", err)}
			return
		}
		call, err := readRecord(tc)
		got <- outcome{call: call, err: err}
	}()
	mnt := t.TempDir()
	opts := fmt.Sprintf("vers=4.2,addr=127.0.0.1,clientaddr=127.0.0.1,port=%d,xprtsec=tls,soft,timeo=20,retrans=1", port)
	mounted := make(chan error, 1)
	go func() { mounted <- unix.Mount("127.0.0.1:/", mnt, "nfs4", 0, opts) }()
	var o outcome
	select {
	case o = <-got:
	case err := <-mounted:
		t.Fatalf("mount -o %s returned %v before the server saw a call through TLS", opts, err)
	case <-time.After(90 * time.Second):
		t.Fatal("no TLS connection from the kernel's NFS client within 90s")
	}
	ln.Close()
	if o.err != nil {
		t.Fatal(o.err)
	}
	// The call's header, decrypted by crypto/tls: CALL, RPC version 2,
	// program NFS (100003), version 4.
	if len(o.call) < 16 || binary.BigEndian.Uint32(o.call[4:]) != 0 || binary.BigEndian.Uint32(o.call[8:]) != 2 ||
		binary.BigEndian.Uint32(o.call[12:]) != 100003 {
		t.Errorf("the first call through TLS is not an NFS call: % x", o.call[:min(len(o.call), 32)])
	}
	if len(logs.find("handshake completed", "client_hello/unauth", "proto=tcp")) != 1 {
		t.Error("the agent logged no completed TCP handshake")
	}
	select {
	case err := <-mounted:
		if err == nil {
			unix.Unmount(mnt, unix.MNT_DETACH)
			t.Error("the mount succeeded against a server that serves no NFS")
		}
		t.Logf("mount: %v", err)
	case <-time.After(60 * time.Second):
		t.Log("the mount had not returned 60s after the server went away (soft mount retrying)")
	}
}

// silentTLSServer answers the NFS client's probe on each connection, then
// reads its ClientHello and never answers: a TLS peer that never answers.
// It reports each connection's STARTTLS answer and first TLS bytes.
func silentTLSServer(t *testing.T, addr string) (port int, startTLS, hello chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	startTLS, hello = make(chan struct{}, 8), make(chan struct{}, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(120 * time.Second))
				if answerProbe(c) != nil {
					return
				}
				startTLS <- struct{}{}
				b := make([]byte, 1)
				if _, err := c.Read(b); err == nil {
					hello <- struct{}{}
				}
				io.Copy(io.Discard, c)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, startTLS, hello
}

func waitFor(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(90 * time.Second):
		t.Fatalf("no %s within 90s", what)
	}
}

// The bound and the shutdown with a request pending: with one handshake at a
// time, a second consumer's request waits in the kernel (its peer sees no
// ClientHello) while the first runs; on shutdown the pending one is answered
// ECANCELED at once and the one in flight runs to its own timeout before
// Serve returns.
func TestBoundAndPendingAtShutdown(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureTLS)
	if !hasFilesystem("nfs4") {
		t.Skip("needs the kernel's NFSv4 client (CONFIG_NFS_V4; in the guest: kqbench vm --load nfsv4)")
	}
	a, logs := listen(t, nil)
	a.MaxInFlight = 1
	stop := serve(t, a)
	// Two servers on two loopback addresses: two NFS clients, two
	// transports, two handshake requests. timeo=100: a 10 s handshake
	// timeout (the NFS client's initial RPC timeout).
	mount := func(addr string, port int) {
		mnt := t.TempDir()
		opts := fmt.Sprintf("vers=4.2,addr=%s,clientaddr=%s,port=%d,xprtsec=tls,soft,timeo=100,retrans=1", addr, addr, port)
		go unix.Mount(addr+":/", mnt, "nfs4", 0, opts)
	}
	portA, _, helloA := silentTLSServer(t, "127.0.0.1:0")
	portB, startB, helloB := silentTLSServer(t, "127.0.0.2:0")
	mount("127.0.0.1", portA)
	waitFor(t, helloA, "ClientHello from the first consumer's handshake")
	mount("127.0.0.2", portB)
	waitFor(t, startB, "STARTTLS probe from the second consumer")
	// The second request is submitted right after the STARTTLS answer;
	// give the kernel a moment to queue it, then check nothing ran it.
	time.Sleep(500 * time.Millisecond)
	select {
	case <-helloB:
		t.Fatal("the second handshake ran while the first was in flight with MaxInFlight 1")
	default:
	}
	if n := a.active.Load(); n != 1 {
		t.Fatalf("%d requests in flight, want 1", n)
	}
	start := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Serve returned %v after its context ended", time.Since(start).Round(time.Millisecond))
	if n := len(logs.find("refused: the agent is shutting down", "status=ECANCELED")); n != 1 {
		t.Errorf("%d pending requests refused at shutdown, want 1", n)
	}
	// The in-flight one ends at its timeout, or when the NFS client,
	// whose own wait is as long, gives up and closes its socket (EOF).
	if n := len(logs.find("handshake failed", "client_hello/unauth")); n != 1 {
		t.Errorf("%d in-flight requests answered before Serve returned, want 1", n)
	}
	select {
	case <-helloB:
		t.Error("the pending request was run after the shutdown began")
	default:
	}
}
