package kquic

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/handshake"
	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/quicsock"
)

// Listener accepts kernel QUIC connections. Handshakes run concurrently in
// the background, at most Config.MaxHandshakes at a time; Accept returns
// connections whose handshake completed, of which at most
// Config.AcceptQueue wait. Beyond those bounds the listener leaves new
// connections in the kernel's queue (Config.Backlog), and the kernel refuses
// the excess with CONNECTION_REFUSED.
type Listener struct {
	sock *quicsock.Socket
	cfg  *Config
	addr netip.AddrPort
	log  *slog.Logger

	// accept takes the next connection from the kernel (the socket's
	// Accept; a scripted one in tests).
	accept    func() (*quicsock.Socket, netip.AddrPort, error)
	handshake func(*quicsock.Socket) (*Conn, error)

	hsSlots chan struct{} // a token per handshake in progress
	qSlots  chan struct{} // a token per connection taken from the kernel and not yet accepted
	ready   chan *Conn    // capacity cap(qSlots): a send never waits

	closed   chan struct{}
	loopDone chan struct{} // the accept loop stopped; loopErr says why
	loopErr  error
	once     sync.Once
	wg       sync.WaitGroup
}

// Listen listens on address ("host:port"; an empty host means all
// addresses). With Config.TLS.NextProtos set, the kernel dispatches clients
// by ALPN among listeners sharing the port; it reads the ALPN from the
// client's first Initial packet only, so with several listeners on a port,
// clients must fit their ClientHello in one packet (Go clients:
// Config.CompactClientHello), or get one port per listener.
func Listen(network, address string, cfg *Config) (*Listener, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if len(cfg.TLS.Certificates) == 0 && cfg.TLS.GetCertificate == nil && cfg.TLS.GetConfigForClient == nil {
		return nil, errors.New("kquic: listen: Config.TLS has no certificate")
	}
	ua, err := net.ResolveUDPAddr(network, address)
	if err != nil {
		return nil, fmt.Errorf("kquic: listen %s: %w", address, err)
	}
	ap := ua.AddrPort()
	if !ap.Addr().IsValid() {
		ap = netip.AddrPortFrom(netip.IPv6Unspecified(), ap.Port())
		if network == "udp4" {
			ap = netip.AddrPortFrom(netip.IPv4Unspecified(), ap.Port())
		}
	}
	sock, err := quicsock.New(quicsock.Family(ap.Addr()))
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: "quic", Addr: net.UDPAddrFromAddrPort(ap), Err: err}
	}
	l, err := listenSocket(sock, ap, cfg)
	if err != nil {
		sock.Close()
		return nil, err
	}
	return l, nil
}

func listenSocket(sock *quicsock.Socket, ap netip.AddrPort, cfg *Config) (*Listener, error) {
	if cfg.ReusePort {
		if err := sock.SetSockoptInt(unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			return nil, fmt.Errorf("kquic: SO_REUSEPORT: %w", err)
		}
	}
	if len(cfg.TLS.NextProtos) > 0 {
		alpn := strings.Join(cfg.TLS.NextProtos, ",")
		if err := sock.SetOption(quicabi.QUIC_SOCKOPT_ALPN, []byte(alpn)); err != nil {
			return nil, fmt.Errorf("kquic: set ALPN list %q: %w", alpn, err)
		}
	}
	if err := sock.Bind(ap); err != nil {
		if errors.Is(err, unix.EADDRINUSE) {
			return nil, &net.OpError{Op: "listen", Net: "quic", Addr: net.UDPAddrFromAddrPort(ap), Err: fmt.Errorf("%w (another listener on this port has an overlapping ALPN list without SO_REUSEPORT, or a UDP socket holds it)", os.NewSyscallError("bind", err))}
		}
		return nil, &net.OpError{Op: "listen", Net: "quic", Addr: net.UDPAddrFromAddrPort(ap), Err: os.NewSyscallError("bind", err)}
	}
	if err := cfg.apply(sock); err != nil {
		return nil, err
	}
	backlog := cfg.Backlog
	if backlog <= 0 {
		backlog = 128
	}
	if err := sock.Listen(backlog); err != nil {
		return nil, &net.OpError{Op: "listen", Net: "quic", Addr: net.UDPAddrFromAddrPort(ap), Err: os.NewSyscallError("listen", err)}
	}
	local, err := sock.LocalAddr()
	if err != nil {
		return nil, err
	}
	if cfg.TLS.MinVersion < tls.VersionTLS13 {
		// One TLS 1.3 config for all connections: they then share its
		// session ticket keys (made on first use), so tickets resume.
		c := *cfg
		c.TLS = cfg.TLS.Clone()
		c.TLS.MinVersion = tls.VersionTLS13
		cfg = &c
	}
	l := newListener(sock, cfg, local)
	l.start()
	return l, nil
}

func newListener(sock *quicsock.Socket, cfg *Config, local netip.AddrPort) *Listener {
	hs, q := cfg.MaxHandshakes, cfg.AcceptQueue
	if hs <= 0 {
		hs = DefaultMaxHandshakes
	}
	if q <= 0 {
		q = DefaultAcceptQueue
	}
	l := &Listener{
		sock: sock, cfg: cfg, addr: local, log: cfg.Logger,
		hsSlots:  make(chan struct{}, hs),
		qSlots:   make(chan struct{}, hs+q),
		ready:    make(chan *Conn, hs+q),
		closed:   make(chan struct{}),
		loopDone: make(chan struct{}),
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	l.accept = sock.Accept
	l.handshake = l.serverHandshake
	return l
}

func (l *Listener) start() {
	l.wg.Add(1)
	go l.acceptLoop()
}

// Addr returns the listener's address (a *net.UDPAddr).
func (l *Listener) Addr() net.Addr { return net.UDPAddrFromAddrPort(l.addr) }

// AddrPort returns the listener's address.
func (l *Listener) AddrPort() netip.AddrPort { return l.addr }

// Accept errors that pass: the process or system is out of descriptors or
// memory for a moment. The loop retries them after acceptBackoff, doubling
// up to acceptBackoffMax, as net/http's server does.
var transientAccept = []error{unix.EMFILE, unix.ENFILE, unix.ENOBUFS, unix.ENOMEM}

const (
	acceptBackoff    = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

func (l *Listener) acceptLoop() {
	defer l.wg.Done()
	defer close(l.loopDone)
	var backoff time.Duration
	for {
		// A slot in the queue and one for the handshake, or stop: while
		// they are all taken, the kernel's backlog holds new connections.
		select {
		case l.qSlots <- struct{}{}:
		case <-l.closed:
			return
		}
		select {
		case l.hsSlots <- struct{}{}:
		case <-l.closed:
			<-l.qSlots
			return
		}
		s, remote, err := l.accept()
		if err != nil {
			<-l.hsSlots
			<-l.qSlots
			select {
			case <-l.closed:
				return
			default:
			}
			if isTransient(err) {
				backoff = min(max(2*backoff, acceptBackoff), acceptBackoffMax)
				l.log.Warn("kquic: accept failed, retrying", "listener", l.addr.String(), "err", err, "retry_in", backoff)
				t := time.NewTimer(backoff)
				select {
				case <-t.C:
				case <-l.closed:
					t.Stop()
					return
				}
				continue
			}
			l.loopErr = &net.OpError{Op: "accept", Net: "quic", Addr: l.Addr(), Err: os.NewSyscallError("accept4", err)}
			return
		}
		backoff = 0
		l.wg.Add(1)
		go l.serve(s, remote)
	}
}

func isTransient(err error) bool {
	for _, t := range transientAccept {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

func (l *Listener) serve(s *quicsock.Socket, remote netip.AddrPort) {
	defer l.wg.Done()
	c, err := l.handshake(s)
	<-l.hsSlots
	if err != nil {
		s.Close()
		<-l.qSlots
		select {
		case <-l.closed:
		default:
			l.log.Info("kquic: handshake failed", "listener", l.addr.String(), "remote", remote.String(), "err", err)
		}
		return
	}
	l.ready <- c // never waits: ready has a place per queue slot
}

func (l *Listener) serverHandshake(s *quicsock.Socket) (*Conn, error) {
	cfg := l.cfg
	if cfg.PreferredAddress.IsValid() {
		if err := s.SetMigrationAddr(cfg.PreferredAddress); err != nil {
			return nil, fmt.Errorf("kquic: set preferred address %v: %w", cfg.PreferredAddress, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.handshakeTimeout())
	defer cancel()
	go func() { // Close aborts the handshake
		select {
		case <-l.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	sess, err := handshake.ServerEarly(ctx, s.File(), cfg.TLS, cfg.Allow0RTT)
	if err != nil {
		return nil, err
	}
	c, err := newConn(s, sess, cfg, false)
	if err != nil {
		sess.Close()
		return nil, err
	}
	if !cfg.DisableSessionTickets && !cfg.TLS.SessionTicketsDisabled {
		// A ticket lets the client resume; failing to send one is not fatal.
		sess.SendSessionTicket(cfg.Allow0RTT)
	}
	return c, nil
}

// Accept waits for a connection whose handshake has completed. After Close
// it returns an error matching net.ErrClosed; if the listener's socket
// fails for good, that error (a *net.OpError with the errno).
func (l *Listener) Accept(ctx context.Context) (*Conn, error) {
	take := func(c *Conn) (*Conn, error) {
		<-l.qSlots
		return c, nil
	}
	select {
	case c := <-l.ready:
		return take(c)
	default:
	}
	select {
	case c := <-l.ready:
		return take(c)
	case <-l.closed:
		return nil, &net.OpError{Op: "accept", Net: "quic", Addr: l.Addr(), Err: ErrClosed}
	case <-l.loopDone:
		select {
		case c := <-l.ready:
			return take(c)
		case <-l.closed:
			return nil, &net.OpError{Op: "accept", Net: "quic", Addr: l.Addr(), Err: ErrClosed}
		default:
		}
		if l.loopErr == nil { // it stopped for Close
			return nil, &net.OpError{Op: "accept", Net: "quic", Addr: l.Addr(), Err: ErrClosed}
		}
		// The loop stopped for good; connections still in handshake may
		// yet complete, but no new one comes.
		return nil, l.loopErr
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops listening, aborts handshakes in progress and closes the
// connections not yet accepted. Accepted connections stay open.
func (l *Listener) Close() error {
	var err error
	l.once.Do(func() {
		close(l.closed)
		err = l.sock.Close()
		l.wg.Wait()
		for {
			select {
			case c := <-l.ready:
				c.Close()
			default:
				return
			}
		}
	})
	return err
}
