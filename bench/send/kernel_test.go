//go:build linux

package send_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/bench/send"
	"kquic.dev/bench/transport"
	"kquic.dev/internal/iouring"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

// Over kernel TLS (the guest): sendfile moves the messages whole, the
// receiver's hash says, and MSG_ZEROCOPY and io_uring's SEND_ZC are
// refused with EOPNOTSUPP, the reasons ktls+zerocopy and ktls+uring-zc
// cells are n/a.
func TestKernelTLSSendMethods(t *testing.T) {
	testenv.Require(t, kmod.FeatureTLS)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tr, err := transport.Get("ktls")
	if err != nil {
		t.Fatal(err)
	}
	o := transport.Options{Crypto: true, GSO: true}
	ln, err := tr.Listen(ctx, netip.MustParseAddrPort("127.0.0.1:0"), o)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	d, err := tr.Dial(ctx, ln.Addr(), o)
	if err != nil {
		t.Fatal(err)
	}
	msg := bytes.Repeat([]byte("kqbench sendfile over kTLS "), 3000)
	const count = 40
	sums := make(chan [32]byte, 1)
	go func() {
		s, err := ln.Accept(ctx)
		if err != nil {
			sums <- [32]byte{}
			return
		}
		defer s.Close()
		h := sha256.New()
		io.Copy(h, s)
		var sum [32]byte
		copy(sum[:], h.Sum(nil))
		sums <- sum
	}()
	s, err := d.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var cnt send.Counters
	snd, err := send.New(send.Sendfile, s, msg, &cnt)
	if err != nil {
		t.Fatalf("sendfile over ktls: %v", err)
	}
	for i := 0; i < count; i++ {
		if err := snd.Send(); err != nil {
			t.Fatalf("sendfile over ktls, message %d: %v", i, err)
		}
	}
	snd.Close()
	s.Close()
	if got, want := <-sums, sha256.Sum256(bytes.Repeat(msg, count)); got != want {
		t.Errorf("sendfile over ktls: the receiver's hash differs from the messages' (counters %v)", cnt.Map())
	}
	if m := cnt.Map(); m[send.CounterBytes] != float64(count*len(msg)) {
		t.Errorf("sendfile over ktls: counted %v", m)
	}

	go ln.Accept(ctx)
	s2, err := d.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	zc, err := send.New(send.ZeroCopy, s2, msg, &cnt)
	if err == nil {
		err = zc.Send()
	}
	if !errors.Is(err, unix.EOPNOTSUPP) {
		t.Errorf("MSG_ZEROCOPY over ktls: %v, want EOPNOTSUPP (send.NA says so)", err)
	}
	t.Logf("MSG_ZEROCOPY over ktls: %v", err)

	go ln.Accept(ctx)
	s3, err := d.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	uz, err := send.New(send.UringZC, s3, msg, &cnt)
	if errors.Is(err, iouring.ErrNotSupported) {
		t.Fatalf("uring-zc: %v: the guest kernel has io_uring", err)
	}
	if err == nil {
		err = uz.Send()
		uz.Close()
	}
	if !errors.Is(err, unix.EOPNOTSUPP) {
		t.Errorf("io_uring SEND_ZC over ktls: %v, want EOPNOTSUPP (send.NA says so)", err)
	}
	t.Logf("io_uring SEND_ZC over ktls: %v", err)
}

// Over kernel QUIC (the guest, with the module): sendfile is refused with
// EINVAL (the module's sendmsg takes no MSG_SPLICE_PAGES), SO_ZEROCOPY
// with EOPNOTSUPP, MSG_ZEROCOPY with EINVAL and io_uring's SEND_ZC with
// EOPNOTSUPP: the reasons of the n/a kquic+sendfile, kquic+zerocopy and
// kquic+uring-zc cells, tried on the socket.
func TestKernelQUICRefusesSendMethods(t *testing.T) {
	testenv.Require(t, kmod.FeatureQUIC)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	certPEM, keyPEM, err := transport.CertificatePEM()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(certPEM)
	leaf, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	scfg := &kquic.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"kqbench"}}}
	ccfg := &kquic.Config{TLS: &tls.Config{RootCAs: pool, ServerName: leaf.DNSNames[0], NextProtos: []string{"kqbench"}}}
	ln, err := kquic.Listen("udp", "127.0.0.1:0", scfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		s, err := c.AcceptStream(ctx)
		if err == nil {
			io.Copy(io.Discard, s)
		}
	}()
	c, err := kquic.DialAddr(ctx, ln.AddrPort(), ccfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	mfd, err := unix.MemfdCreate("kqbench-test", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(mfd)
	if _, err := unix.Write(mfd, make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	var sfErr, optErr, zcErr error
	raw.Control(func(fd uintptr) {
		var off int64
		_, sfErr = unix.Sendfile(int(fd), mfd, &off, 4096)
		optErr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ZEROCOPY, 1)
		_, zcErr = unix.SendmsgN(int(fd), []byte("x"), nil, nil, unix.MSG_ZEROCOPY|unix.MSG_DONTWAIT)
	})
	ring, err := iouring.New(8, 16)
	if err != nil {
		t.Fatalf("io_uring: %v: the guest kernel has it", err)
	}
	defer ring.Close()
	var uzErr error
	raw.Control(func(fd uintptr) { _, uzErr = ring.SendZC(int(fd), []byte("x"), 0) })
	t.Logf("kquic: sendfile %v, SO_ZEROCOPY %v, MSG_ZEROCOPY %v, io_uring SEND_ZC %v", sfErr, optErr, zcErr, uzErr)
	if !errors.Is(uzErr, unix.EOPNOTSUPP) {
		t.Errorf("io_uring SEND_ZC on a QUIC socket: %v, want EOPNOTSUPP", uzErr)
	}
	if !errors.Is(sfErr, unix.EINVAL) {
		t.Errorf("sendfile on a QUIC socket: %v, want EINVAL (send.NA says the module refuses MSG_SPLICE_PAGES)", sfErr)
	}
	if !errors.Is(optErr, unix.EOPNOTSUPP) {
		t.Errorf("SO_ZEROCOPY on a QUIC socket: %v, want EOPNOTSUPP", optErr)
	}
	if !errors.Is(zcErr, unix.EINVAL) {
		t.Errorf("MSG_ZEROCOPY on a QUIC socket: %v, want EINVAL", zcErr)
	}
}
