//go:build linux

package kquic_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

// firstDatagram is a quic-go server's UDP socket that says how long the
// first datagram to arrive was, before quic-go reads it as it reads from
// its own socket: at most 1452 bytes, the rest lost.
type firstDatagram struct {
	net.PacketConn
	size chan int
	once sync.Once
}

func (c *firstDatagram) ReadFrom(p []byte) (int, net.Addr, error) {
	buf := make([]byte, 65536)
	n, addr, err := c.PacketConn.ReadFrom(buf)
	if err == nil {
		c.once.Do(func() { c.size <- n })
	}
	return copy(p, buf[:n]), addr, err
}

// quicGoOnLoopback starts a quic-go server on 127.0.0.1 that answers each
// stream with its SHA-256; the first datagram's size arrives on the
// returned channel. Everything ends with the test.
func quicGoOnLoopback(t *testing.T) (addr string, first <-chan int) {
	t.Helper()
	_, stls := tlsPair(t)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	fd := &firstDatagram{PacketConn: udp, size: make(chan int, 1)}
	tr := &quic.Transport{Conn: fd}
	ln, err := tr.Listen(stls, &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); ln.Close(); wg.Wait(); tr.Close(); udp.Close() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept(ctx)
			if err != nil {
				return
			}
			wg.Add(1)
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
	return udp.LocalAddr().String(), fd.size
}

// TestInteropQuicGoServerLoopback: the kquic client reaches a quic-go
// server on loopback once InitialMaxUDPPayload caps its first flight, as
// quicnet sets it (1200 bytes): its first datagram is the 1200 bytes of a
// padded Initial, the handshake completes, and a stream carries a
// megabyte. Without the cap the module takes loopback's MTU for the first
// Initial (bugLargeFirstInitial): a datagram over the 1452 bytes quic-go
// reads, which it never answers.
func TestInteropQuicGoServerLoopback(t *testing.T) {
	testenv.Require(t, kmod.FeatureQUIC)
	ctls, _ := tlsPair(t)
	t.Run("capped", func(t *testing.T) {
		addr, first := quicGoOnLoopback(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		c, err := kquic.Dial(ctx, "udp", addr, &kquic.Config{TLS: ctls, InitialMaxUDPPayload: 1200})
		if err != nil {
			t.Fatalf("kquic dial to quic-go on loopback, first flight capped at 1200 bytes: %v", err)
		}
		defer c.Close()
		if n := <-first; n != 1200 {
			t.Errorf("the first datagram: %d bytes, want 1200 (a padded Initial within the cap)", n)
		}
		s, err := c.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkSum(s, 1, 1<<20); err != nil {
			t.Fatalf("a megabyte to quic-go on loopback: %v", err)
		}
		if p, err := c.PeerTransportParameters(); err != nil || p.MaxUDPPayloadSize != quicGoMaxDatagram {
			t.Errorf("quic-go's max_udp_payload_size as the kernel has it: %d, %v; want %d (its own, in place of the cap)", p.MaxUDPPayloadSize, err, quicGoMaxDatagram)
		}
	})
	t.Run("uncapped", func(t *testing.T) {
		addr, first := quicGoOnLoopback(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		dialed := make(chan error, 1)
		go func() {
			c, err := kquic.Dial(ctx, "udp", addr, &kquic.Config{TLS: ctls})
			if err == nil {
				c.Close()
			}
			dialed <- err
		}()
		var n int
		select {
		case n = <-first:
		case err := <-dialed:
			t.Fatalf("the dial ended (%v) before quic-go read a datagram", err)
		}
		cancel()
		err := <-dialed
		testenv.ModuleBug(t, bugLargeFirstInitial, n > quicGoMaxDatagram && err != nil,
			fmt.Sprintf("the kernel client's first datagram to quic-go on loopback: %d bytes (quic-go reads %d); the dial: %v (canceled once the datagram arrived: %v)", n, quicGoMaxDatagram, err, errors.Is(err, context.Canceled)))
	})
}
