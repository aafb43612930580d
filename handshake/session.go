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
}

// ConnectionState reports the negotiated TLS parameters (version, cipher
// suite, ALPN, peer certificates, resumption).
func (s *Session) ConnectionState() tls.ConnectionState { return s.q.ConnectionState() }

// Close releases the TLS state. It does not close the socket.
func (s *Session) Close() error { return s.q.Close() }

// Client runs the client side of the handshake on f, a non-blocking QUIC
// socket that has been connect()ed. Set the socket's transport parameters
// and config before: the kernel encodes them into the ClientHello.
func Client(ctx context.Context, f *os.File, cfg *tls.Config) (*Session, error) {
	if cfg == nil {
		return nil, &Error{"configure", errors.New("no tls.Config")}
	}
	c := cfg.Clone()
	if c.MinVersion < tls.VersionTLS13 {
		c.MinVersion = tls.VersionTLS13
	}
	return run(ctx, f, tls.QUICClient(&tls.QUICConfig{TLSConfig: c}), true)
}

// Server runs the server side of the handshake on f, a non-blocking QUIC
// socket returned by accept(). Per-connection transport parameters (and a
// preferred address) must be set before.
func Server(ctx context.Context, f *os.File, cfg *tls.Config) (*Session, error) {
	if cfg == nil {
		return nil, &Error{"configure", errors.New("no tls.Config")}
	}
	c := cfg.Clone()
	if c.MinVersion < tls.VersionTLS13 {
		c.MinVersion = tls.VersionTLS13
	}
	return run(ctx, f, tls.QUICServer(&tls.QUICConfig{TLSConfig: c}), false)
}

func run(ctx context.Context, f *os.File, q *tls.QUICConn, client bool) (_ *Session, err error) {
	sock, err := quicsock.FromConn(f)
	if err != nil {
		return nil, &Error{"use socket", err}
	}
	s := &Session{q: q, sock: sock, client: client}
	// The context bounds the waits through the socket's deadlines.
	stop := context.AfterFunc(ctx, func() { f.SetDeadline(time.Unix(1, 0)) })
	defer func() {
		if !stop() {
			f.SetDeadline(time.Time{})
			if err != nil && ctx.Err() != nil {
				err = &Error{"wait for the peer", fmt.Errorf("%w: %w", ErrTimeout, ctx.Err())}
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
}

func (h *driver) drain() error {
	s := h.s
	for {
		ev := s.q.NextEvent()
		switch ev.Kind {
		case tls.QUICNoEvent:
			return nil
		case tls.QUICSetReadSecret, tls.QUICSetWriteSecret:
			send := ev.Kind == tls.QUICSetWriteSecret
			err := s.installSecret(send, ev.Level, ev.Suite, ev.Data)
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
			if err := s.send(ev.Level, ev.Data); err != nil {
				return err
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
		case tls.QUICHandshakeDone:
			h.done = true
		}
	}
}

func (s *Session) localParams() ([]byte, error) {
	b, err := s.sock.GetOption(quicabi.QUIC_SOCKOPT_TRANSPORT_PARAM_EXT, make([]byte, 512))
	if err != nil {
		return nil, &Error{"read our transport parameters from the kernel", err}
	}
	return append([]byte(nil), b...), nil
}

func (s *Session) installSecret(send bool, level tls.QUICEncryptionLevel, suite uint16, secret []byte) error {
	defer clear(secret) // crypto/tls is done with it; the kernel has its own copy
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

// explain turns a socket error into the peer's close, where there was one.
func (s *Session) explain(err error) error {
	if !errors.Is(err, unix.ENOTCONN) && !errors.Is(err, unix.EPIPE) && !errors.Is(err, unix.ECONNRESET) {
		return err
	}
	b, gerr := s.sock.GetOption(quicabi.QUIC_SOCKOPT_CONNECTION_CLOSE, make([]byte, quicabi.SizeofConnectionClose))
	if gerr != nil {
		return err
	}
	cc, derr := quicabi.UnmarshalConnectionClose(b)
	if derr != nil {
		return err
	}
	return fmt.Errorf("%w (%w)", &PeerClosedError{Code: cc.ErrCode, Frame: cc.Frame, Phrase: cc.Phrase}, err)
}

// HandleTicket gives the client a NewSessionTicket message that the kernel
// received after the handshake (event NEW_SESSION_TICKET, or
// getsockopt(SESSION_TICKET)), so crypto/tls stores the session in the
// tls.Config's ClientSessionCache.
func (s *Session) HandleTicket(nst []byte) error {
	if !s.client {
		return errors.New("handshake: HandleTicket is for clients")
	}
	if err := s.q.HandleData(tls.QUICEncryptionLevelApplication, nst); err != nil {
		return &Error{"process session ticket", err}
	}
	for ev := s.q.NextEvent(); ev.Kind != tls.QUICNoEvent; ev = s.q.NextEvent() {
	}
	return nil
}

// SendSessionTicket makes the server send a NewSessionTicket (at the
// application level), allowing 0-RTT on resumption if earlyData is set.
func (s *Session) SendSessionTicket(earlyData bool) error {
	if s.client {
		return errors.New("handshake: SendSessionTicket is for servers")
	}
	if err := s.q.SendSessionTicket(tls.QUICSessionTicketOptions{EarlyData: earlyData}); err != nil {
		return &Error{"make session ticket", err}
	}
	for ev := s.q.NextEvent(); ev.Kind != tls.QUICNoEvent; ev = s.q.NextEvent() {
		if ev.Kind == tls.QUICWriteData {
			if err := s.send(ev.Level, ev.Data); err != nil {
				return err
			}
		}
	}
	return nil
}
