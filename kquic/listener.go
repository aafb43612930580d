package kquic

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"kquic.dev/handshake"
	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/quicsock"
)

// Listener accepts kernel QUIC connections. Handshakes run concurrently in
// the background; Accept returns connections whose handshake completed.
type Listener struct {
	sock *quicsock.Socket
	cfg  *Config
	addr netip.AddrPort

	ready  chan *Conn
	closed chan struct{}
	once   sync.Once
	wg     sync.WaitGroup

	mu         sync.Mutex
	err        error // why the accept loop stopped
	hsFailures []error
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
		return nil, err
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
			return nil, fmt.Errorf("kquic: listen on %v: %w (another listener on this port has an overlapping ALPN list without SO_REUSEPORT, or a UDP socket holds it)", ap, err)
		}
		return nil, fmt.Errorf("kquic: listen on %v: %w", ap, err)
	}
	if err := cfg.apply(sock); err != nil {
		return nil, err
	}
	backlog := cfg.Backlog
	if backlog <= 0 {
		backlog = 128
	}
	if err := sock.Listen(backlog); err != nil {
		return nil, fmt.Errorf("kquic: listen on %v: %w", ap, err)
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
	l := &Listener{sock: sock, cfg: cfg, addr: local, ready: make(chan *Conn, backlog), closed: make(chan struct{})}
	l.wg.Add(1)
	go l.acceptLoop()
	return l, nil
}

// Addr returns the listener's address (a *net.UDPAddr).
func (l *Listener) Addr() net.Addr { return net.UDPAddrFromAddrPort(l.addr) }

// AddrPort returns the listener's address.
func (l *Listener) AddrPort() netip.AddrPort { return l.addr }

func (l *Listener) acceptLoop() {
	defer l.wg.Done()
	for {
		s, _, err := l.sock.Accept()
		if err != nil {
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
			return
		}
		l.wg.Add(1)
		go l.serve(s)
	}
}

func (l *Listener) serve(s *quicsock.Socket) {
	defer l.wg.Done()
	c, err := l.handshake(s)
	if err != nil {
		s.Close()
		l.mu.Lock()
		if len(l.hsFailures) < 16 {
			l.hsFailures = append(l.hsFailures, err)
		}
		l.mu.Unlock()
		return
	}
	select {
	case l.ready <- c:
	case <-l.closed:
		c.Close()
	}
}

func (l *Listener) handshake(s *quicsock.Socket) (*Conn, error) {
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
	sess, err := handshake.Server(ctx, s.File(), cfg.TLS)
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

// Accept waits for a connection whose handshake has completed.
func (l *Listener) Accept(ctx context.Context) (*Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.closed:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// HandshakeErrors returns (and forgets) the errors of recent failed
// handshakes, at most 16, for diagnostics.
func (l *Listener) HandshakeErrors() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.hsFailures
	l.hsFailures = nil
	return e
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
