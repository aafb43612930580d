//go:build linux

package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"kquic.dev/ktls"
)

// tcpServer is the handshake-mode server of the TCP transports: every
// accepted connection runs setup (the TLS handshake and the switch to
// kernel TLS, or nothing), answers one request and closes.
type tcpServer struct {
	name   string
	ln     *net.TCPListener
	ctx    context.Context
	cancel context.CancelFunc
	cs     conns
	loop   sync.WaitGroup
}

func startTCPServer(name string, addr netip.AddrPort, size int, setup func(ctx context.Context, c *net.TCPConn) (io.ReadWriteCloser, error)) (*tcpServer, error) {
	ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(addr))
	if err != nil {
		return nil, err
	}
	s := &tcpServer{name: name, ln: ln}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.loop.Add(1)
	go func() {
		defer s.loop.Done()
		for {
			c, err := ln.AcceptTCP()
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					continue
				}
				return
			}
			if !s.cs.add(c) {
				c.Close()
				return
			}
			go func() {
				defer s.cs.done(c)
				ctx, cancel := context.WithTimeout(s.ctx, ExchangeTimeout)
				defer cancel()
				stop := context.AfterFunc(ctx, func() { c.Close() })
				defer stop()
				rw, err := setup(ctx, c)
				if err != nil {
					return
				}
				answer(rw, make([]byte, size))
				rw.Close()
			}()
		}
	}()
	return s, nil
}

func (s *tcpServer) Addr() netip.AddrPort { return s.ln.Addr().(*net.TCPAddr).AddrPort() }

func (s *tcpServer) Close() error {
	s.cancel()
	err := s.ln.Close()
	s.loop.Wait()
	return errors.Join(err, s.cs.closeAll(s.name))
}

// tcpClient dials a TCP connection for every exchange and runs setup on it.
type tcpClient struct {
	name  string
	addr  netip.AddrPort
	setup func(ctx context.Context, c *net.TCPConn) (io.ReadWriteCloser, error)
}

func (cl *tcpClient) Exchange(ctx context.Context, req, reply []byte) (Exchange, error) {
	ctx, cancel := context.WithTimeout(ctx, ExchangeTimeout)
	defer cancel()
	t0 := time.Now()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", cl.addr.String())
	if err != nil {
		return Exchange{}, fmt.Errorf("%s: dial: %w", cl.name, err)
	}
	c := nc.(*net.TCPConn)
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	rw, err := cl.setup(ctx, c)
	if err != nil {
		return Exchange{}, fmt.Errorf("%s: %w", cl.name, err)
	}
	defer rw.Close()
	if _, err := rw.Write(req); err != nil {
		return Exchange{}, fmt.Errorf("%s: write the request: %w", cl.name, err)
	}
	first, err := readAnswer(rw, reply)
	if err != nil {
		return Exchange{}, fmt.Errorf("%s: %w", cl.name, err)
	}
	ex := Exchange{TTFB: first.Sub(t0)}
	if k, ok := rw.(*ktls.Conn); ok {
		ex.Resumed = k.ConnectionState().DidResume
	}
	return ex, nil
}

func (cl *tcpClient) Prime(context.Context, int) error {
	return fmt.Errorf("%s: no 0-RTT", cl.name)
}

func (cl *tcpClient) Close() error { return nil }

func plainSetup(_ context.Context, c *net.TCPConn) (io.ReadWriteCloser, error) { return c, nil }

func (tcpTransport) listenHandshakes(addr netip.AddrPort, _ Options, size int) (HandshakeServer, error) {
	return startTCPServer("tcp", addr, size, plainSetup)
}

func (tcpTransport) handshakeClient(addr netip.AddrPort, _ Options, _ bool) (HandshakeClient, error) {
	return &tcpClient{name: "tcp", addr: addr, setup: plainSetup}, nil
}

func (kernelTLS) listenHandshakes(addr netip.AddrPort, o Options, size int) (HandshakeServer, error) {
	stls, _, err := tlsConfigs(alpnBench, o)
	if err != nil {
		return nil, err
	}
	cfg := &ktls.Config{TLS: stls, ExpectNoPad: true}
	return startTCPServer("ktls", addr, size, func(ctx context.Context, c *net.TCPConn) (io.ReadWriteCloser, error) {
		return ktls.Server(ctx, c, cfg)
	})
}

// The ktls client makes a full handshake every time (no session cache):
// TLS 1.3 resumption over TCP saves the certificate, not a round trip.
func (kernelTLS) handshakeClient(addr netip.AddrPort, o Options, _ bool) (HandshakeClient, error) {
	_, ctls, err := tlsConfigs(alpnBench, o)
	if err != nil {
		return nil, err
	}
	cfg := &ktls.Config{TLS: ctls, ExpectNoPad: true}
	return &tcpClient{name: "ktls", addr: addr, setup: func(ctx context.Context, c *net.TCPConn) (io.ReadWriteCloser, error) {
		return ktls.Client(ctx, c, cfg)
	}}, nil
}
