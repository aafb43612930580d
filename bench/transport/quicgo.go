//go:build linux

package transport

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"

	"github.com/quic-go/quic-go"
)

func init() { register(quicGo{}) }

type quicGo struct{}

func (quicGo) Name() string     { return "quic-go" }
func (quicGo) Available() error { return nil }

func (quicGo) Support(o Options) (bool, string) {
	if !o.Crypto {
		return false, "n/a: quic-go cannot turn encryption off"
	}
	if o.CC != "" && o.CC != QuicGoCongestionControl {
		return false, "n/a: quic-go has no choice of congestion control; it always uses its own CUBIC (see the cubic cells)"
	}
	if !o.GSO {
		return true, "quic-go with GSO off (QUIC_GO_DISABLE_GSO)" + quicGoNotes(o)
	}
	return true, "quic-go with UDP GSO where the kernel has it" + quicGoNotes(o)
}

func quicGoNotes(o Options) string {
	s := ""
	if o.CC != "" {
		s += "; congestion control: its own CUBIC (quic-go has no choice)"
	}
	if o.UDPRcvBuf > 0 {
		s += fmt.Sprintf("; UDP receive buffer %d bytes", o.UDPRcvBuf)
	}
	return s
}

// shrinkRcvBuf sets the UDP socket's receive buffer to o.UDPRcvBuf, after
// quic-go has raised it (it asks for 7 MiB, with SO_RCVBUFFORCE as root).
func shrinkRcvBuf(pc *net.UDPConn, o Options) error {
	if o.UDPRcvBuf <= 0 {
		return nil
	}
	if err := pc.SetReadBuffer(o.UDPRcvBuf); err != nil {
		return fmt.Errorf("quic-go: SO_RCVBUF %d: %w", o.UDPRcvBuf, err)
	}
	return nil
}

const alpnBench = "kqbench"

// gsoEnv guards QUIC_GO_DISABLE_GSO, which quic-go reads when a connection's
// socket is set up.
var gsoEnv sync.Mutex

func packetConn(addr netip.AddrPort) (*net.UDPConn, error) {
	return net.ListenUDP("udp", net.UDPAddrFromAddrPort(addr))
}

// withGSO runs fn (which sets up quic-go's socket) with quic-go's GSO
// switched as o says.
func withGSO(o Options, fn func() error) error {
	gsoEnv.Lock()
	defer gsoEnv.Unlock()
	if !o.GSO {
		os.Setenv("QUIC_GO_DISABLE_GSO", "true")
		defer os.Unsetenv("QUIC_GO_DISABLE_GSO")
	}
	return fn()
}

type quicGoListener struct {
	tr  *quic.Transport
	ln  *quic.Listener
	hub *hub
}

func (quicGo) Listen(ctx context.Context, addr netip.AddrPort, o Options) (Listener, error) {
	stls, _, err := tlsConfigs(alpnBench, o)
	if err != nil {
		return nil, err
	}
	pc, err := packetConn(addr)
	if err != nil {
		return nil, err
	}
	tr := &quic.Transport{Conn: pc}
	var ln *quic.Listener
	err = withGSO(o, func() (err error) {
		ln, err = tr.Listen(stls, quicGoConf(o))
		return err
	})
	if err == nil {
		err = shrinkRcvBuf(pc, o)
	}
	if err != nil {
		pc.Close()
		return nil, err
	}
	l := &quicGoListener{tr: tr, ln: ln}
	l.hub = newHub(func(ctx context.Context) (func(context.Context) (io.ReadWriteCloser, error), io.Closer, error) {
		c, err := ln.Accept(ctx)
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context) (io.ReadWriteCloser, error) { return c.AcceptStream(ctx) },
			closerFunc(func() error { return c.CloseWithError(0, "") }), nil
	})
	return l, nil
}

func (l *quicGoListener) Accept(ctx context.Context) (io.ReadWriteCloser, error) {
	return l.hub.accept(ctx)
}

func (l *quicGoListener) Addr() netip.AddrPort {
	return l.tr.Conn.LocalAddr().(*net.UDPAddr).AddrPort()
}

func (l *quicGoListener) Close() error {
	return l.hub.close(func() error {
		l.ln.Close()
		return l.tr.Close()
	})
}

type quicGoDialer struct {
	tr   *quic.Transport
	conn *quic.Conn
}

func (quicGo) Dial(ctx context.Context, addr netip.AddrPort, o Options) (Dialer, error) {
	_, ctls, err := tlsConfigs(alpnBench, o)
	if err != nil {
		return nil, err
	}
	local := netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	if addr.Addr().Is6() {
		local = netip.AddrPortFrom(netip.IPv6Unspecified(), 0)
	}
	pc, err := packetConn(local)
	if err != nil {
		return nil, err
	}
	tr := &quic.Transport{Conn: pc}
	var conn *quic.Conn
	err = withGSO(o, func() (err error) {
		conn, err = tr.Dial(ctx, net.UDPAddrFromAddrPort(addr), ctls, quicGoConf(o))
		return err
	})
	if err == nil {
		err = shrinkRcvBuf(pc, o)
	}
	if err != nil {
		tr.Close()
		return nil, fmt.Errorf("quic-go: dial %v: %w", addr, err)
	}
	return &quicGoDialer{tr: tr, conn: conn}, nil
}

func (d *quicGoDialer) Open(ctx context.Context) (io.ReadWriteCloser, error) {
	return d.conn.OpenStreamSync(ctx)
}

func (d *quicGoDialer) Close() error {
	d.conn.CloseWithError(0, "")
	return d.tr.Close()
}
