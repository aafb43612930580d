//go:build linux

package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/quic-go/quic-go"

	"kquic.dev/kquic"
)

// quicServer is the handshake-mode server of a QUIC transport: a loop
// accepting connections, each answering one request on its first stream and
// then waiting for the client to close.
type quicServer struct {
	name   string
	addr   netip.AddrPort
	ctx    context.Context
	cancel context.CancelFunc
	cs     conns
	loop   sync.WaitGroup
	close  func() error // the listener's
}

// start starts the accept loop: accept returns the next connection, whose
// first stream is answered before it waits for the client to close.
func (s *quicServer) start(size int, accept func(ctx context.Context) (conn quicConn, err error)) {
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.loop.Add(1)
	go func() {
		defer s.loop.Done()
		for {
			c, err := accept(s.ctx)
			if err != nil {
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
				st, err := c.acceptStream(ctx)
				if err != nil {
					return
				}
				if answer(st, make([]byte, size)) != nil {
					return
				}
				st.Close()
				select { // the client closes once it has the answer
				case <-c.done():
				case <-ctx.Done():
				}
			}()
		}
	}()
}

// quicConn is a server connection of either QUIC transport.
type quicConn interface {
	acceptStream(ctx context.Context) (interface {
		Read([]byte) (int, error)
		Write([]byte) (int, error)
		Close() error
	}, error)
	done() <-chan struct{}
	Close() error
}

func (s *quicServer) Addr() netip.AddrPort { return s.addr }

func (s *quicServer) Close() error {
	s.cancel()
	err := s.close()
	s.loop.Wait()
	return errors.Join(err, s.cs.closeAll(s.name))
}

type kquicServerConn struct{ c *kquic.Conn }

func (k kquicServerConn) acceptStream(ctx context.Context) (interface {
	Read([]byte) (int, error)
	Write([]byte) (int, error)
	Close() error
}, error) {
	return k.c.AcceptStream(ctx)
}
func (k kquicServerConn) done() <-chan struct{} { return k.c.Done() }
func (k kquicServerConn) Close() error          { return k.c.Close() }

// Both ends of kquic's handshake mode set StreamDataNoDelay, as Go sets
// TCP_NODELAY on TCP and quic-go has no such delay: with the module's
// default coalescing the small request and answer each wait for the ACK of
// what is in flight (at 300 ms RTT under netem the time to first byte was 3.3
// round trips instead of 2).
func (kernelQUIC) listenHandshakes(addr netip.AddrPort, o Options, size int) (HandshakeServer, error) {
	cfg, err := kquicConfig(o, true)
	if err != nil {
		return nil, err
	}
	cfg.Allow0RTT = true
	cfg.HandshakeTimeout = ExchangeTimeout
	cfg.StreamDataNoDelay = true
	ln, err := kquic.Listen("udp", addr.String(), cfg)
	if err != nil {
		return nil, err
	}
	s := &quicServer{name: "kquic", addr: ln.AddrPort(), close: ln.Close}
	s.start(size, func(ctx context.Context) (quicConn, error) {
		c, err := ln.Accept(ctx)
		if err != nil {
			return nil, err
		}
		return kquicServerConn{c}, nil
	})
	return s, nil
}

// kquicClient dials a new kernel QUIC socket for every exchange.
type kquicClient struct {
	addr  netip.AddrPort
	cfg   *kquic.Config
	early bool
	cache *ticketCache
}

func (kernelQUIC) handshakeClient(addr netip.AddrPort, o Options, early bool) (HandshakeClient, error) {
	cfg, err := kquicConfig(o, false)
	if err != nil {
		return nil, err
	}
	cfg.HandshakeTimeout = ExchangeTimeout
	cfg.StreamDataNoDelay = true
	cl := &kquicClient{addr: addr, cfg: cfg, early: early}
	if early {
		cl.cache = newTicketCache()
		cfg.TLS.ClientSessionCache = cl.cache
	}
	return cl, nil
}

func (cl *kquicClient) Exchange(ctx context.Context, req, reply []byte) (Exchange, error) {
	return cl.exchange(ctx, req, reply, cl.early)
}

func (cl *kquicClient) exchange(ctx context.Context, req, reply []byte, early bool) (Exchange, error) {
	ctx, cancel := context.WithTimeout(ctx, ExchangeTimeout)
	defer cancel()
	t0 := time.Now()
	var c *kquic.Conn
	var s *kquic.Stream
	var err error
	if early {
		c, s, err = kquic.DialAddrEarly(ctx, cl.addr, cl.cfg, req)
		if err != nil {
			return Exchange{}, fmt.Errorf("kquic: dial with 0-RTT: %w", err)
		}
	} else {
		c, err = kquic.DialAddr(ctx, cl.addr, cl.cfg)
		if err != nil {
			return Exchange{}, fmt.Errorf("kquic: dial: %w", err)
		}
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() }) // a read never outlives the exchange
	defer stop()
	if !early {
		if s, err = c.OpenStreamSync(ctx); err != nil {
			return Exchange{}, fmt.Errorf("kquic: open a stream: %w", err)
		}
		if _, err := s.Write(req); err != nil {
			return Exchange{}, fmt.Errorf("kquic: write the request: %w", err)
		}
	}
	first, err := readAnswer(s, reply)
	if err != nil {
		return Exchange{}, fmt.Errorf("kquic: %w", err)
	}
	return Exchange{TTFB: first.Sub(t0), Resumed: c.ConnectionState().DidResume, Early: c.EarlyDataAccepted()}, nil
}

func (cl *kquicClient) Prime(ctx context.Context, size int) error {
	if cl.cache == nil {
		return errors.New("kquic: Prime is for a 0-RTT client")
	}
	return cl.cache.prime(ctx, size, func(ctx context.Context, req, reply []byte) (Exchange, error) {
		return cl.exchange(ctx, req, reply, false)
	})
}

func (cl *kquicClient) Close() error { return nil }

type quicGoServerConn struct{ c *quic.Conn }

func (q *quicGoServerConn) acceptStream(ctx context.Context) (interface {
	Read([]byte) (int, error)
	Write([]byte) (int, error)
	Close() error
}, error) {
	return q.c.AcceptStream(ctx)
}
func (q *quicGoServerConn) done() <-chan struct{} { return q.c.Context().Done() }
func (q *quicGoServerConn) Close() error          { return q.c.CloseWithError(0, "") }

// handshakeConf is quic-go's configuration in handshake mode: 0-RTT
// allowed, and a handshake that stalls fails after ExchangeTimeout.
func handshakeConf(o Options) *quic.Config {
	c := quicGoConf(o)
	c.Allow0RTT = true
	c.HandshakeIdleTimeout = ExchangeTimeout
	return c
}

func (quicGo) listenHandshakes(addr netip.AddrPort, o Options, size int) (HandshakeServer, error) {
	stls, _, err := tlsConfigs(alpnBench, o)
	if err != nil {
		return nil, err
	}
	pc, err := packetConn(addr)
	if err != nil {
		return nil, err
	}
	tr := &quic.Transport{Conn: pc}
	var ln *quic.EarlyListener
	err = withGSO(o, func() (err error) {
		ln, err = tr.ListenEarly(stls, handshakeConf(o))
		return err
	})
	if err != nil {
		pc.Close()
		return nil, err
	}
	s := &quicServer{name: "quic-go", addr: pc.LocalAddr().(*net.UDPAddr).AddrPort(),
		close: func() error { ln.Close(); return tr.Close() }}
	// ListenEarly's connections come before their handshake completes: the
	// server reads a 0-RTT request and answers at once (0.5-RTT data).
	s.start(size, func(ctx context.Context) (quicConn, error) {
		c, err := ln.Accept(ctx)
		if err != nil {
			return nil, err
		}
		return &quicGoServerConn{c}, nil
	})
	return s, nil
}

// quicGoClient dials every exchange's connection from one UDP socket (one
// quic.Transport), as a quic-go client does.
type quicGoClient struct {
	tr    *quic.Transport
	addr  *net.UDPAddr
	o     Options
	early bool
	cache *ticketCache

	initMu sync.Mutex
	inited bool
}

func (quicGo) handshakeClient(addr netip.AddrPort, o Options, early bool) (HandshakeClient, error) {
	local := netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	if addr.Addr().Is6() {
		local = netip.AddrPortFrom(netip.IPv6Unspecified(), 0)
	}
	pc, err := packetConn(local)
	if err != nil {
		return nil, err
	}
	cl := &quicGoClient{tr: &quic.Transport{Conn: pc}, addr: net.UDPAddrFromAddrPort(addr), o: o, early: early}
	if early {
		cl.cache = newTicketCache()
	}
	return cl, nil
}

func (cl *quicGoClient) Exchange(ctx context.Context, req, reply []byte) (Exchange, error) {
	return cl.exchange(ctx, req, reply, cl.early)
}

func (cl *quicGoClient) exchange(ctx context.Context, req, reply []byte, early bool) (Exchange, error) {
	ctx, cancel := context.WithTimeout(ctx, ExchangeTimeout)
	defer cancel()
	_, ctls, err := tlsConfigs(alpnBench, cl.o)
	if err != nil {
		return Exchange{}, err
	}
	if cl.cache != nil {
		ctls.ClientSessionCache = cl.cache
	}
	t0 := time.Now()
	var c *quic.Conn
	dial := func() (err error) {
		if early {
			c, err = cl.tr.DialEarly(ctx, cl.addr, ctls, handshakeConf(cl.o))
		} else {
			c, err = cl.tr.Dial(ctx, cl.addr, ctls, handshakeConf(cl.o))
		}
		return err
	}
	// quic-go sets its socket up, reading QUIC_GO_DISABLE_GSO, on the
	// first dial: only that one holds withGSO's lock.
	cl.initMu.Lock()
	if !cl.inited {
		err = withGSO(cl.o, dial)
		cl.inited = err == nil
		cl.initMu.Unlock()
	} else {
		cl.initMu.Unlock()
		err = dial()
	}
	if err != nil {
		return Exchange{}, fmt.Errorf("quic-go: dial: %w", err)
	}
	defer c.CloseWithError(0, "")
	stop := context.AfterFunc(ctx, func() { c.CloseWithError(0, "") })
	defer stop()
	var s *quic.Stream
	if early {
		s, err = c.OpenStream() // 0-RTT: before the handshake completes
	} else {
		s, err = c.OpenStreamSync(ctx)
	}
	if err != nil {
		return Exchange{}, fmt.Errorf("quic-go: open a stream: %w", err)
	}
	if _, err := s.Write(req); err != nil {
		return Exchange{}, fmt.Errorf("quic-go: write the request: %w", err)
	}
	first, err := readAnswer(s, reply)
	if err != nil {
		return Exchange{}, fmt.Errorf("quic-go: %w", err)
	}
	select { // whether 0-RTT was accepted is known once the handshake is
	case <-c.HandshakeComplete():
	case <-ctx.Done():
		return Exchange{}, fmt.Errorf("quic-go: the handshake did not complete: %w", ctx.Err())
	}
	st := c.ConnectionState()
	return Exchange{TTFB: first.Sub(t0), Resumed: st.TLS.DidResume, Early: st.Used0RTT}, nil
}

func (cl *quicGoClient) Prime(ctx context.Context, size int) error {
	if cl.cache == nil {
		return errors.New("quic-go: Prime is for a 0-RTT client")
	}
	return cl.cache.prime(ctx, size, func(ctx context.Context, req, reply []byte) (Exchange, error) {
		return cl.exchange(ctx, req, reply, false)
	})
}

func (cl *quicGoClient) Close() error { return cl.tr.Close() }
