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
		probe, err := readRecord(c)
		if err != nil {
			got <- outcome{err: fmt.Errorf("read the probe: %w", err)}
			return
		}
		// xid, CALL, rpcvers 2, prog, vers, proc NULL, cred AUTH_TLS (7).
		if len(probe) < 32 || binary.BigEndian.Uint32(probe[4:]) != 0 || binary.BigEndian.Uint32(probe[20:]) != 0 || binary.BigEndian.Uint32(probe[24:]) != 7 {
			got <- outcome{err: fmt.Errorf("the first call is not a NULL with AUTH_TLS: % x", probe)}
			return
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
		if _, err := c.Write(append(rec, reply...)); err != nil {
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
