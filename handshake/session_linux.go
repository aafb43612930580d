package handshake

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/quicsock"
)

// Session is a completed handshake. It stays usable for the messages that
// follow the handshake: the server's session tickets, which the client
// processes with [Session.HandleTicket].
type Session struct {
	q      *tls.QUICConn
	sock   *quicsock.Socket
	client bool
	// RejectedEarlyData says the server refused the client's 0-RTT data.
	RejectedEarlyData bool

	early     func() error // the client's 0-RTT writer (ClientEarly)
	usedEarly bool         // the Early key is in the kernel: 0-RTT was sent (client) or accepted (server)
	stage     string       // how far the handshake got, for timeout errors
	alpn      []string     // the protocols offered (client) or served (server)
	// closeMarker is the phrase markClose gave the kernel's close record.
	closeMarker string
}

// ConnectionState reports the negotiated TLS parameters (version, cipher
// suite, ALPN, peer certificates, resumption).
func (s *Session) ConnectionState() tls.ConnectionState { return s.q.ConnectionState() }

// Close releases the TLS state. It does not close the socket.
func (s *Session) Close() error { return s.q.Close() }

// Client runs the client side of the handshake on f, a non-blocking QUIC
// socket that has been connect()ed. Set the socket's transport parameters
// and config before: the kernel encodes them into the ClientHello.
//
// With cfg.ClientSessionCache set, sessions are stored together with the
// server's transport parameters (in tls.SessionState.Extra), which a later
// [ClientEarly] needs for 0-RTT. cfg.ServerName must then be set: it is the
// cache key.
func Client(ctx context.Context, f *os.File, cfg *tls.Config) (*Session, error) {
	return ClientEarly(ctx, f, cfg, nil)
}

// ClientEarly is [Client] with 0-RTT. If cfg.ClientSessionCache holds a
// session for cfg.ServerName whose ticket allows early data, and that
// session was stored by this package (so the server's transport parameters
// were saved with it), the handshake gives the kernel those parameters and
// installs the 0-RTT key, and then calls early: stream data sent on the
// socket inside early leaves in 0-RTT packets, before the handshake
// completes. early is not called when 0-RTT is not possible; use
// [Session.EarlyDataAccepted] afterwards to tell whether the server took
// the data (a server that rejects it makes the kernel send it again in
// 1-RTT packets). 0-RTT data can be replayed by an attacker (RFC 9001
// §9.2): send only requests that are safe to repeat.
func ClientEarly(ctx context.Context, f *os.File, cfg *tls.Config, early func() error) (*Session, error) {
	if cfg == nil {
		return nil, &Error{"configure", errors.New("no tls.Config")}
	}
	c := cfg.Clone()
	if c.MinVersion < tls.VersionTLS13 {
		c.MinVersion = tls.VersionTLS13
	}
	q := tls.QUICClient(&tls.QUICConfig{TLSConfig: c, EnableSessionEvents: c.ClientSessionCache != nil})
	return run(ctx, f, q, true, early, c.NextProtos)
}

// Server runs the server side of the handshake on f, a non-blocking QUIC
// socket returned by accept(). Per-connection transport parameters (and a
// preferred address) must be set before.
//
// Pass the same cfg, with MinVersion set to tls.VersionTLS13, to every
// connection of a server: crypto/tls makes its session ticket keys on first
// use, so connections share them, and clients can resume. A cfg with a lower
// MinVersion is cloned for each connection, which gets its own keys then,
// and tickets from one connection do not resume on another.
func Server(ctx context.Context, f *os.File, cfg *tls.Config) (*Session, error) {
	if cfg == nil {
		return nil, &Error{"configure", errors.New("no tls.Config")}
	}
	c := cfg
	if c.MinVersion < tls.VersionTLS13 {
		c = cfg.Clone()
		c.MinVersion = tls.VersionTLS13
	}
	return run(ctx, f, tls.QUICServer(&tls.QUICConfig{TLSConfig: c}), false, nil, c.NextProtos)
}

// ServerEarly is [Server] that decides on 0-RTT itself: with allowEarly
// false it declines a client's 0-RTT data even when the client's session
// ticket allows it (a ticket of a server that allowed it and shares the
// ticket keys), and the client sends it again in 1-RTT packets; with
// allowEarly true it takes it as the ticket allows, as Server does.
// Whether this server's own tickets allow 0-RTT is SendSessionTicket's
// earlyData.
func ServerEarly(ctx context.Context, f *os.File, cfg *tls.Config, allowEarly bool) (*Session, error) {
	if allowEarly {
		return Server(ctx, f, cfg)
	}
	if cfg == nil {
		return nil, &Error{"configure", errors.New("no tls.Config")}
	}
	c := cfg
	if c.MinVersion < tls.VersionTLS13 {
		c = cfg.Clone()
		c.MinVersion = tls.VersionTLS13
	}
	// The session events let run decline early data (QUICResumeSession).
	return run(ctx, f, tls.QUICServer(&tls.QUICConfig{TLSConfig: c, EnableSessionEvents: true}), false, nil, c.NextProtos)
}

func run(ctx context.Context, f *os.File, q *tls.QUICConn, client bool, early func() error, alpn []string) (_ *Session, err error) {
	sock, err := quicsock.FromConn(f)
	if err != nil {
		return nil, &Error{"use socket", err}
	}
	s := &Session{q: q, sock: sock, client: client, early: early, alpn: alpn, stage: "start"}
	s.markClose()
	defer func() {
		if err != nil {
			s.ClearCloseMarker()
		}
	}()
	start := time.Now()
	// The context bounds the waits through the socket's deadlines.
	stop := context.AfterFunc(ctx, func() { f.SetDeadline(time.Unix(1, 0)) })
	defer func() {
		if !stop() {
			f.SetDeadline(time.Time{})
			if err != nil && ctx.Err() != nil {
				err = s.timeoutError(time.Since(start).Round(time.Millisecond), ctx.Err())
			}
		}
		if err != nil {
			q.Close()
		}
	}()
	if client {
		ext, err := s.localParams()
		if err != nil {
			return nil, err
		}
		q.SetTransportParameters(ext)
	}
	if err := q.Start(ctx); err != nil {
		return nil, &Error{"start TLS", err}
	}
	h := &driver{s: s}
	buf := make([]byte, 64*1024)
	for {
		if err := h.drain(); err != nil {
			return nil, err
		}
		if h.done && h.appRead {
			return s, nil
		}
		level, n, err := s.recv(buf)
		if err != nil {
			return nil, err
		}
		if err := q.HandleData(level, buf[:n]); err != nil {
			return nil, &Error{"TLS", err}
		}
	}
}

// driver carries crypto/tls's events to the kernel.
type driver struct {
	s       *Session
	done    bool // crypto/tls said HandshakeDone
	appRead bool // the 1-RTT read secret is in the kernel: it is ESTABLISHED

	pending      []byte // handshake bytes not sent yet, all of one level
	pendingLevel tls.QUICEncryptionLevel
}

// flush sends the handshake bytes gathered for one level in one sendmsg.
func (h *driver) flush() error {
	if len(h.pending) == 0 {
		return nil
	}
	err := h.s.send(h.pendingLevel, h.pending)
	h.pending = h.pending[:0]
	return err
}

func (h *driver) drain() error {
	s := h.s
	for {
		ev := s.q.NextEvent()
		// Consecutive messages of one level leave in one send, as one
		// stretch of the level's CRYPTO stream; anything else comes after
		// what was written before it.
		if ev.Kind != tls.QUICWriteData || (len(h.pending) > 0 && ev.Level != h.pendingLevel) {
			if err := h.flush(); err != nil {
				return err
			}
		}
		switch ev.Kind {
		case tls.QUICNoEvent:
			return nil
		case tls.QUICSetReadSecret, tls.QUICSetWriteSecret:
			send := ev.Kind == tls.QUICSetWriteSecret
			err := s.installSecret(send, ev.Level, ev.Suite, ev.Data)
			if err == nil && ev.Level == tls.QUICEncryptionLevelHandshake {
				s.stage = "the Handshake keys were installed"
			}
			if err == nil && ev.Level == tls.QUICEncryptionLevelEarly {
				// Client: the kernel now sends stream data in 0-RTT
				// packets. Server: it decrypts the client's.
				s.usedEarly = true
				if send && s.early != nil {
					if eerr := s.early(); eerr != nil {
						return &Error{"send 0-RTT data", eerr}
					}
				}
				continue
			}
			if !send && ev.Level == tls.QUICEncryptionLevelApplication {
				// A peer that closed right after its last flight makes the
				// final install replay its CONNECTION_CLOSE: EPIPE, yet
				// the handshake is complete.
				if err != nil && !errors.Is(err, unix.EPIPE) {
					return err
				}
				h.appRead = true
				continue
			}
			if err != nil {
				return err
			}
		case tls.QUICWriteData:
			h.pendingLevel = ev.Level
			h.pending = append(h.pending, ev.Data...)
			if ev.Level == tls.QUICEncryptionLevelInitial {
				if s.client {
					s.stage = "the ClientHello was sent"
				} else {
					s.stage = "the ServerHello was sent"
				}
			}
		case tls.QUICTransportParameters:
			if err := s.sock.SetOption(quicabi.QUIC_SOCKOPT_TRANSPORT_PARAM_EXT, ev.Data); err != nil {
				return &Error{"give the peer's transport parameters to the kernel", s.explain(err)}
			}
		case tls.QUICTransportParametersRequired:
			ext, err := s.localParams()
			if err != nil {
				return err
			}
			s.q.SetTransportParameters(ext)
		case tls.QUICRejectedEarlyData:
			s.RejectedEarlyData = true
		case tls.QUICResumeSession:
			if s.client {
				s.prepareEarly(ev.SessionState)
			} else if ev.SessionState != nil {
				// Only ServerEarly(allowEarly false) asks for this
				// event: decline 0-RTT.
				ev.SessionState.EarlyData = false
			}
		case tls.QUICHandshakeDone:
			h.done = true
			s.stage = "crypto/tls completed the handshake"
		}
	}
}

func (s *Session) localParams() ([]byte, error) {
	b, err := s.sock.GetOption(quicabi.QUIC_SOCKOPT_TRANSPORT_PARAM_EXT, make([]byte, 512))
	if err != nil {
		return nil, &Error{"read our transport parameters from the kernel", s.explain(err)}
	}
	return append([]byte(nil), b...), nil
}

func (s *Session) installSecret(send bool, level tls.QUICEncryptionLevel, suite uint16, secret []byte) error {
	// secret is crypto/tls's own traffic secret, not a copy: it still
	// computes the Finished messages with it, so it must not be wiped here
	// (wiping it made both of our ends agree on a zero key and every other
	// TLS stack reject our Finished). Our own copies are wiped below.
	kl, err := quicabi.CryptoLevelFromTLS(level)
	if err != nil {
		return &Error{"install secret", err}
	}
	cipher, err := quicabi.CipherFromTLSSuite(suite)
	if err != nil {
		return &Error{"install secret", err}
	}
	cs, err := quicabi.NewCryptoSecret(send, kl, cipher, secret)
	if err != nil {
		return &Error{"install secret", err}
	}
	b := cs.Marshal()
	cs.Zero()
	err = s.sock.SetOption(quicabi.QUIC_SOCKOPT_CRYPTO_SECRET, b)
	clear(b)
	if err != nil {
		dir := "read"
		if send {
			dir = "write"
		}
		return &Error{fmt.Sprintf("install the %s %s secret (%s)", kl, dir, cipher), s.explain(err)}
	}
	return nil
}

func (s *Session) send(level tls.QUICEncryptionLevel, data []byte) error {
	kl, err := quicabi.CryptoLevelFromTLS(level)
	if err != nil {
		return &Error{"send handshake data", err}
	}
	oob := quicabi.HandshakeInfoCmsg(kl)
	n, err := s.sock.SendMsg(data, oob, 0)
	if err != nil {
		return &Error{fmt.Sprintf("send %d bytes of %s handshake data", len(data), kl), s.explain(err)}
	}
	if n != len(data) {
		return &Error{"send handshake data", fmt.Errorf("the kernel took %d of %d bytes", n, len(data))}
	}
	return nil
}

func (s *Session) recv(buf []byte) (tls.QUICEncryptionLevel, int, error) {
	oob := make([]byte, quicabi.RecvCmsgSpace)
	n, oobn, flags, err := s.sock.RecvMsg(buf, oob, 0)
	if err != nil {
		return 0, 0, &Error{"receive handshake data", s.explain(err)}
	}
	if flags&unix.MSG_CTRUNC != 0 {
		return 0, 0, &Error{"receive handshake data", errors.New("control message truncated")}
	}
	cm, err := quicabi.ParseCmsg(oob[:oobn])
	if err != nil {
		return 0, 0, &Error{"receive handshake data", err}
	}
	if !cm.HasHandshakeInfo {
		return 0, 0, &Error{"receive handshake data", fmt.Errorf("got a non-handshake message (flags %#x) before the handshake finished: do not enable events or send data before it", flags)}
	}
	if n == 0 {
		return 0, 0, &Error{"receive handshake data", errors.New("empty handshake message: the connection was reset")}
	}
	level, err := cm.Level.TLSLevel()
	if err != nil {
		return 0, 0, &Error{"receive handshake data", err}
	}
	return level, n, nil
}

// timeoutError describes a handshake whose context ended at the stage it
// had reached.
func (s *Session) timeoutError(after time.Duration, cause error) error {
	var what string
	switch {
	case s.client && s.stage == "the ClientHello was sent":
		what = fmt.Sprintf("no answer from the server to our ClientHello within %v: check that a QUIC server listens at that address and port; note that a kernel QUIC listener silently drops a ClientHello whose ALPN list %q it does not serve, so the server may not support our ALPN protocols", after, s.alpn)
	case s.client:
		what = fmt.Sprintf("the handshake did not complete within %v (last step: %s)", after, s.stage)
	default:
		what = fmt.Sprintf("the client did not complete the handshake within %v (last step: %s)", after, s.stage)
	}
	return &Error{"wait for the peer", fmt.Errorf("%s: %w (%w)", what, ErrTimeout, cause)}
}
