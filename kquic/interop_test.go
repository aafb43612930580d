//go:build linux

package kquic_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"io"
	"kquic.dev/bench/topo"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"kquic.dev/kquic"
)

// The interop protocol, the same on both servers: every bidirectional
// stream the client opens is read to its end and answered with the SHA-256
// of what arrived; every datagram is sent back.

const (
	interopBulk    = 16 << 20 // one stream
	interopStreams = 8        // concurrent streams, interopSmall each
	interopSmall   = 256 << 10
)

type datagrammer interface {
	SendDatagram([]byte) error
	ReceiveDatagram(context.Context) ([]byte, error)
}

// serveSum answers one stream with the SHA-256 of its data.
func serveSum(s io.ReadWriteCloser) {
	h := sha256.New()
	if _, err := io.Copy(h, s); err != nil {
		return
	}
	s.Write(h.Sum(nil))
	s.Close()
}

// serveDatagrams echoes datagrams until ctx ends.
func serveDatagrams(ctx context.Context, c datagrammer) {
	for {
		d, err := c.ReceiveDatagram(ctx)
		if err != nil {
			return
		}
		c.SendDatagram(d)
	}
}

// checkSum sends n bytes of seeded data on s and checks the peer's SHA-256.
func checkSum(s io.ReadWriteCloser, seed byte, n int64) error {
	h := sha256.New()
	if _, err := io.CopyBuffer(io.MultiWriter(s, h), io.LimitReader(newPRNG(seed), n), make([]byte, 32<<10)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := s.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	got, err := io.ReadAll(s)
	if err != nil {
		return fmt.Errorf("read the sum: %w", err)
	}
	if !bytes.Equal(got, h.Sum(nil)) {
		return fmt.Errorf("the peer's SHA-256 of %d bytes differs (%x)", n, got)
	}
	return nil
}

// runInteropClient exercises a connection from the client side: one bulk
// stream, several concurrent streams, datagrams. drops counts what the
// quic-go peer saw of the module's stale-PTO bug (stalepto_test.go).
func runInteropClient(t *testing.T, open func() (io.ReadWriteCloser, error), dg datagrammer, drops *handshakeDropCounter) {
	t.Helper()
	start := time.Now()
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSum(s, 1, interopBulk); err != nil {
		interopFailure(t, fmt.Errorf("bulk stream: %w", err), drops) // fatal unless it is the known stall
	}
	t.Logf("bulk %d MiB with SHA-256 check: %v", interopBulk>>20, time.Since(start).Round(time.Millisecond))

	var wg sync.WaitGroup
	errs := make(chan error, interopStreams)
	for i := 0; i < interopStreams; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := open()
			if err == nil {
				err = checkSum(s, byte(10+i), interopSmall+int64(i)*1000)
			}
			if err != nil {
				errs <- fmt.Errorf("stream %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	if len(all) > 0 && strings.Contains(all[0].Error(), "no recent network activity") {
		// The kernel stopped answering after the bulk transfer: see
		// interopFailure.
		interopFailure(t, fmt.Errorf("after the bulk transfer: %v", all), drops)
	}
	for _, err := range all {
		t.Error(err)
	}

	// Datagrams are unreliable: resend until the echoes come back.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	want := map[string]bool{}
	for i := 0; i < 3; i++ {
		want[fmt.Sprintf("datagram %d", i)] = true
	}
	got := make(chan string, 16)
	go func() {
		for {
			d, err := dg.ReceiveDatagram(ctx)
			if err != nil {
				close(got)
				return
			}
			got <- string(d)
		}
	}()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for len(want) > 0 {
		for d := range want {
			if err := dg.SendDatagram([]byte(d)); err != nil {
				t.Fatalf("send datagram: %v", err)
			}
		}
		select {
		case d, ok := <-got:
			if !ok {
				t.Fatalf("datagram echoes missing: %v", want)
			}
			delete(want, d)
		case <-tick.C:
		}
	}
	cancel()
	for range got {
	}
}

// TestInteropQuicGoClient: a quic-go client (UDP sockets, userspace QUIC)
// against a kquic server.
func TestInteropQuicGoClient(t *testing.T) {
	interopQuicGoClient(t, nil)
}

func interopQuicGoClient(t *testing.T, curves []tls.CurveID) {
	ctls, stls := tlsPair(t)
	ctls.CurvePreferences = curves
	ctls.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	ln := hsListen(t, &kquic.Config{TLS: stls, Allow0RTT: true, Transport: kquic.TransportParameters{MaxDatagramFrameSize: 1400}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	accepted := make(chan *kquic.Conn, 4)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept(ctx)
			if err != nil {
				return
			}
			accepted <- c
			wg.Add(2)
			go func() { defer wg.Done(); serveDatagrams(ctx, c) }()
			go func() {
				defer wg.Done()
				for {
					s, err := c.AcceptStream(ctx)
					if err != nil {
						return
					}
					go serveSum(s)
				}
			}()
		}
	}()
	defer func() {
		cancel()
		for {
			select {
			case c := <-accepted:
				c.Close()
			default:
				return
			}
		}
	}()

	drops := &handshakeDropCounter{}
	qconf := &quic.Config{EnableDatagrams: true, Tracer: drops.tracer}
	// dctx bounds the dial and every stream opened after it: the bulk
	// transfer alone took 40 s under single-thread TCG on a loaded host.
	dctx, dcancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer dcancel()
	conn, err := quic.DialAddr(dctx, ln.AddrPort().String(), ctls, qconf)
	if err != nil {
		interopFailure(t, fmt.Errorf("quic-go dial: %w (server: %v)", err, hsErrors(ln)), nil)
	}
	st := conn.ConnectionState()
	if st.TLS.NegotiatedProtocol != "kq" || !st.SupportsDatagrams.Remote || st.TLS.DidResume {
		t.Errorf("quic-go client: ALPN %q, peer datagrams %v, resumed %v", st.TLS.NegotiatedProtocol, st.SupportsDatagrams.Remote, st.TLS.DidResume)
	}
	runInteropClient(t, func() (io.ReadWriteCloser, error) { return conn.OpenStreamSync(dctx) }, conn, drops)
	waitTicket(t, ctls.ClientSessionCache)
	conn.CloseWithError(0, "")

	// Resumption, with 0-RTT: quic-go keeps the server's transport
	// parameters in the session itself.
	econn, err := quic.DialAddrEarly(dctx, ln.AddrPort().String(), ctls, qconf)
	if err != nil {
		t.Fatalf("quic-go 0-RTT dial: %v", err)
	}
	defer econn.CloseWithError(0, "")
	s, err := econn.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSum(s, 99, 1000); err != nil {
		t.Fatalf("stream on the resumed connection: %v", err)
	}
	st = econn.ConnectionState()
	if !st.TLS.DidResume {
		t.Error("quic-go client did not resume")
	}
	srv := <-accepted
	srv2 := <-accepted
	_ = srv
	if !srv2.ConnectionState().DidResume {
		t.Error("kquic server: the second connection did not resume")
	}
	t.Logf("quic-go client 0-RTT: used %v; kquic server accepted early data: %v", st.Used0RTT, srv2.EarlyDataAccepted())
	if st.Used0RTT != srv2.EarlyDataAccepted() {
		t.Errorf("quic-go says 0-RTT used %v, kquic server says accepted %v", st.Used0RTT, srv2.EarlyDataAccepted())
	}
}

// quicGoOverVeth starts a quic-go server in the server namespace of a veth
// pair with an ordinary MTU (1400): on loopback (MTU 65536) the kernel's
// first Initial is a datagram of over 1500 bytes, and quic-go reads at
// most 1452 bytes, so it never answers without Config.InitialMaxUDPPayload
// (TestInteropQuicGoServerLoopback); this test dials as a client with the
// kernel's defaults does. Its transport is our own, for its tracer: the
// datagrams quic-go could not parse (interopFailure). The pair goes at the
// test's end; the caller closes the listener and the transport.
func quicGoOverVeth(t *testing.T, stls *tls.Config, qc *quic.Config) (*topo.Topology, *quic.Transport, *quic.EarlyListener, *handshakeDropCounter) {
	t.Helper()
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth)
	tp, err := topo.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tp.Close() })
	if err := tp.SetMTU(1400); err != nil {
		t.Fatal(err)
	}
	var ql *quic.EarlyListener
	drops := &handshakeDropCounter{}
	qc.Tracer = drops.tracer
	qt := &quic.Transport{Tracer: drops}
	if err := tp.Server.Do(func() (err error) {
		qt.Conn, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(topo.ServerAddr, 0)))
		if err == nil {
			ql, err = qt.ListenEarly(stls, qc)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return tp, qt, ql, drops
}

// TestInteropQuicGoServer: the kquic client against a quic-go server.
func TestInteropQuicGoServer(t *testing.T) {
	ctls, stls := tlsPair(t)
	ctls.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	pair(t, nil, nil) // checks for the module; the pair is unused
	tp, qt, ql, drops := quicGoOverVeth(t, stls, &quic.Config{EnableDatagrams: true, Allow0RTT: true})
	var err error
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); ql.Close(); wg.Wait(); qt.Close(); qt.Conn.Close() }()
	type srvInfo struct {
		resumed, early bool
	}
	infos := make(chan srvInfo, 4)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ql.Accept(ctx)
			if err != nil {
				return
			}
			wg.Add(2)
			go func() {
				defer wg.Done()
				select {
				case <-c.HandshakeComplete():
				case <-ctx.Done():
				}
				st := c.ConnectionState()
				infos <- srvInfo{st.TLS.DidResume, st.Used0RTT}
				serveDatagrams(ctx, c)
			}()
			go func() {
				defer wg.Done()
				defer c.CloseWithError(0, "")
				for {
					s, err := c.AcceptStream(ctx)
					if err != nil {
						return
					}
					go serveSum(s)
				}
			}()
		}
	}()
	addr := ql.Addr().String()
	cfg := &kquic.Config{TLS: ctls, Transport: kquic.TransportParameters{MaxDatagramFrameSize: 1400}}
	dctx, dcancel := context.WithTimeout(context.Background(), 3*time.Minute) // see interopQuicGoClient
	defer dcancel()
	var c *kquic.Conn
	err = tp.Client.Do(func() (err error) {
		c, err = kquic.Dial(dctx, "udp", addr, cfg)
		return err
	})
	if err != nil {
		interopFailure(t, fmt.Errorf("kquic dial to quic-go: %w", err), drops)
	}
	if cs := c.ConnectionState(); cs.NegotiatedProtocol != "kq" || cs.DidResume {
		t.Errorf("ALPN %q, resumed %v", cs.NegotiatedProtocol, cs.DidResume)
	}
	runInteropClient(t, func() (io.ReadWriteCloser, error) { return c.OpenStreamSync(dctx) }, c, drops)
	waitTicket(t, ctls.ClientSessionCache)
	c.Close()
	if i := <-infos; i.resumed {
		t.Error("quic-go server: the first connection resumed")
	}

	// Resumption with 0-RTT data.
	var c2 *kquic.Conn
	var s *kquic.Stream
	err = tp.Client.Do(func() (err error) {
		c2, s, err = kquic.DialEarly(dctx, "udp", addr, cfg, []byte("early request"))
		return err
	})
	if err != nil {
		t.Fatalf("kquic DialEarly to quic-go: %v", err)
	}
	defer c2.Close()
	s.Close()
	sum, err := io.ReadAll(s)
	want := sha256.Sum256([]byte("early request"))
	if err != nil || !bytes.Equal(sum, want[:]) {
		t.Fatalf("0-RTT stream: %x, %v", sum, err)
	}
	i := <-infos
	if !c2.ConnectionState().DidResume || !i.resumed {
		t.Errorf("resumed: kquic client %v, quic-go server %v", c2.ConnectionState().DidResume, i.resumed)
	}
	if !c2.EarlyDataAccepted() || !i.early {
		t.Errorf("0-RTT: kquic client says accepted %v, quic-go server says used %v", c2.EarlyDataAccepted(), i.early)
	}
}

// TestInteropQuicGoSelf is the control: quic-go against itself in the same
// environment.
func TestInteropQuicGoSelf(t *testing.T) {
	ctls, stls := tlsPair(t)
	ql, err := quic.ListenAddr("127.0.0.1:0", stls, &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ql.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		c, err := ql.Accept(ctx)
		if err != nil {
			return
		}
		s, err := c.AcceptStream(ctx)
		if err == nil {
			serveSum(s)
		}
		<-ctx.Done()
		c.CloseWithError(0, "")
	}()
	c, err := quic.DialAddr(ctx, ql.Addr().String(), ctls, &quic.Config{})
	if err != nil {
		t.Fatalf("quic-go to quic-go: %v", err)
	}
	defer c.CloseWithError(0, "")
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSum(s, 3, 100000); err != nil {
		t.Fatal(err)
	}
}

// interopFailure ends a quic-go interop test. Two failures are known:
//   - the connection goes silent until quic-go's idle timeout ("no recent
//     network activity"), mid-transfer or waiting for the SHA-256 answer:
//     the module's stale-PTO bug (stalepto_test.go, TestModuleStalePTO has
//     the deterministic reproducer). It is reported as an expected failure
//     only when quic-go saw its mark - Handshake packets from the kernel
//     after the handshake, dropped for want of keys (drops) - on a module
//     build it is known on, and fails the test otherwise;
//   - the kernel client's first Initial datagram takes the path MTU (1624
//     bytes on loopback), and quic-go reads at most 1452-byte datagrams, so
//     it never answers: bugLargeFirstInitial. An expected failure only when
//     the kernel client got no answer to its ClientHello and quic-go's
//     transport (drops as its tracer) dropped datagrams it read cut short,
//     on a module build it is known on; a failure otherwise. Over the veth
//     pair at MTU 1400 that TestInteropQuicGoServer dials across it cannot
//     happen.
func interopFailure(t *testing.T, err error, drops *handshakeDropCounter) {
	t.Helper()
	msg := err.Error()
	if strings.Contains(msg, "no recent network activity") && drops != nil && drops.n.Load() > 0 {
		staleptoVerdict(t, fmt.Sprintf("%v; quic-go dropped %d Handshake packets from the kernel after the handshake", err, drops.n.Load()))
	}
	if strings.Contains(msg, "no answer from the server to our ClientHello") && drops != nil && drops.cut.Load() > 0 {
		testenv.ModuleBug(t, bugLargeFirstInitial, true, fmt.Sprintf("%v; quic-go could not parse %d datagram(s) it read cut at %d bytes", err, drops.cut.Load(), quicGoMaxDatagram))
	}
	t.Fatal(err)
}
