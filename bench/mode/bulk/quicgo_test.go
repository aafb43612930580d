//go:build linux

package bulk

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math/big"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/side"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// BenchmarkQuicGoAgainstBare measures kqbench's quic-go cell and a bare
// quic-go sender and receiver (quic-go's API and nothing else: one
// connection, one stream, a loop of Writes at one end and of Reads at the
// other, the bytes counted at the receiver) side by side on the same veth
// pair, with the same quic-go configuration, message size and pinning
// (client CPU 0, server CPU 1, as the matrix's --affinity auto), and
// reports the ratio: what kqbench's own harness costs quic-go.
//
//	go test -run '^$' -bench QuicGoAgainstBare -benchtime 1x ./bench/mode/bulk/
func BenchmarkQuicGoAgainstBare(b *testing.B) {
	testenv.Root(b)
	testenv.Require(b, kmod.FeatureVeth)
	if n := runtime.NumCPU(); n < 2 {
		b.Skipf("pinning the two ends needs 2 CPUs; this process may use %d", n)
	}
	t, err := topo.NewPrepared(1500, true)
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close()
	qg, _ := transport.Get("quic-go")
	aff := &matrix.Affinity{Client: 0, Server: 1}
	const dur = 3 * time.Second
	o := transport.Options{Crypto: true, GSO: true}
	for _, size := range []int{64 << 10} {
		b.Run(render.SizeName(size), func(b *testing.B) {
			var ours, bare []float64
			for i := 0; i < b.N; i++ {
				// Alternate, so drift affects both alike.
				for round := 0; round < 5; round++ {
					c := matrix.Cell{Transport: "quic-go", Size: size, MTU: 1500, GSO: true, Crypto: true, Direction: "up", Streams: 1}
					s, err := Measure(context.Background(), t.ClientDevice(), side.Local{T: t, CPU: aff.Server}, qg, c, o, aff, 500*time.Millisecond, dur, nil)
					if err != nil {
						b.Fatal(err)
					}
					ours = append(ours, s.Bps)
					bps, err := bareQuicGo(t, o, aff, size, 500*time.Millisecond, dur)
					if err != nil {
						b.Fatal(err)
					}
					bare = append(bare, bps)
				}
			}
			o, th := median(ours), median(bare)
			b.Logf("kqbench %.0f, bare %.0f Mbit/s (samples %v, %v)", o/1e6, th/1e6, ours, bare)
			b.ReportMetric(o/1e6, "kqbench-Mbit/s")
			b.ReportMetric(th/1e6, "bare-Mbit/s")
			b.ReportMetric(o/th, "ratio")
		})
	}
}

// bareQuicGo runs a quic-go server in the server namespace and a client in
// the client namespace, the client writing size-byte messages on one
// stream, and returns the goodput the server read over dur after warmup.
// The reading and writing goroutines are pinned as aff says; quic-go's own
// goroutines are not, as in kqbench's cell.
func bareQuicGo(t *topo.Topology, o transport.Options, aff *matrix.Affinity, size int, warmup, dur time.Duration) (float64, error) {
	stls, ctls, err := bareTLS()
	if err != nil {
		return 0, err
	}
	conf := &quic.Config{ // kqbench's (transport.quicGoConf)
		MaxIdleTimeout:                 30 * time.Second,
		InitialStreamReceiveWindow:     4 << 20,
		MaxStreamReceiveWindow:         16 << 20,
		InitialConnectionReceiveWindow: 8 << 20,
		MaxConnectionReceiveWindow:     64 << 20,
	}
	var ln *quic.Listener
	if err := t.Server.Do(func() (err error) {
		ln, err = quic.ListenAddr(net.JoinHostPort(topo.ServerAddr.String(), "0"), stls, conf)
		return err
	}); err != nil {
		return 0, err
	}
	defer ln.Close()
	var received atomic.Int64
	srvDone := make(chan error, 1)
	go func() {
		c, err := ln.Accept(context.Background())
		if err != nil {
			srvDone <- err
			return
		}
		defer c.CloseWithError(0, "")
		s, err := c.AcceptStream(context.Background())
		if err != nil {
			srvDone <- err
			return
		}
		host.PinThread(aff.Server)
		buf := make([]byte, size)
		for {
			n, err := s.Read(buf)
			received.Add(int64(n))
			if err != nil {
				srvDone <- nil
				return
			}
		}
	}()
	var conn *quic.Conn
	if err := t.Client.Do(func() (err error) {
		conn, err = quic.DialAddr(context.Background(), ln.Addr().String(), ctls, conf)
		return err
	}); err != nil {
		return 0, err
	}
	s, err := conn.OpenStream()
	if err != nil {
		return 0, err
	}
	var stop atomic.Bool
	cliDone := make(chan struct{})
	go func() {
		defer close(cliDone)
		host.PinThread(aff.Client)
		msg := make([]byte, size)
		for !stop.Load() {
			if _, err := s.Write(msg); err != nil {
				return
			}
		}
	}()
	time.Sleep(warmup)
	b0, t0 := received.Load(), time.Now()
	time.Sleep(dur)
	b1, t1 := received.Load(), time.Now()
	stop.Store(true)
	conn.CloseWithError(0, "")
	<-cliDone
	if err := <-srvDone; err != nil {
		return 0, err
	}
	if b1 == b0 {
		return 0, errors.New("bare quic-go: nothing arrived")
	}
	return float64(b1-b0) * 8 / t1.Sub(t0).Seconds(), nil
}

// bareTLS is a self-signed server configuration and a client one that
// trusts it.
func bareTLS() (srv, cli *tls.Config, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"bare"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	srv = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, NextProtos: []string{"bare"}}
	cli = &tls.Config{RootCAs: pool, ServerName: "bare", NextProtos: []string{"bare"}}
	return srv, cli, nil
}
