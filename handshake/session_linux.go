package handshake

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
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

// explain turns a socket error into the close that ended the connection,
// the peer's or our kernel's, where there was one.
func (s *Session) explain(err error) error {
	return explainClose(err, s.sock.HungUp, s.closeInfo, s.closeMarker)
}

// markClose gives the kernel's close record of the connection a phrase of
// this handshake's own (CloseMarker), so that explain can tell who closed:
// the kernel's record holds the close the peer sent (its code, frame type
// and phrase, the marker gone) or the one the kernel sent itself (its code
// and frame type, our phrase kept), and says nothing else of its side. A
// CONNECTION_CLOSE the kernel sends during the handshake carries the
// phrase. Without it (the option failed) explain cannot tell.
func (s *Session) markClose() {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return
	}
	m := "kquic handshake " + hex.EncodeToString(b[:])
	if s.sock.SetOption(quicabi.QUIC_SOCKOPT_CONNECTION_CLOSE, quicabi.ConnectionClose{Phrase: m}.Marshal()) == nil {
		s.closeMarker = m
	}
}

// CloseMarker is the phrase the handshake gave the kernel's close record
// of the connection (QUIC_SOCKOPT_CONNECTION_CLOSE), "" if none, and the
// record keeps it until a close replaces it: a record that holds it is our
// kernel's own close (its code and frame type; all zero: its idle timer or
// a stateless reset), one that does not the peer's. Setting the option
// replaces it; a close with the default code and reason (nothing set)
// sends it as its reason phrase. kquic sets the option at every close;
// [Session.ClearCloseMarker] clears it.
func (s *Session) CloseMarker() string { return s.closeMarker }

// ClearCloseMarker clears the phrase of [Session.CloseMarker] from the
// kernel's close record, if it holds it still, so that a close with the
// default code and reason does not send it. A peer's close the kernel
// records between the check and the clearing is lost: call it before the
// peer can close, or where its record does not matter.
func (s *Session) ClearCloseMarker() {
	if s.closeMarker == "" {
		return
	}
	if cc, ok := s.closeInfo(); ok && cc.Phrase == s.closeMarker {
		s.sock.SetOption(quicabi.QUIC_SOCKOPT_CONNECTION_CLOSE, quicabi.ConnectionClose{ErrCode: cc.ErrCode}.Marshal())
	}
	s.closeMarker = ""
}

// closeInfo reads the close the kernel recorded for the connection (the
// peer's CONNECTION_CLOSE, or the kernel's own; see markClose).
func (s *Session) closeInfo() (quicabi.ConnectionClose, bool) {
	b, err := s.sock.GetOption(quicabi.QUIC_SOCKOPT_CONNECTION_CLOSE, make([]byte, quicabi.SizeofConnectionClose))
	if err != nil {
		return quicabi.ConnectionClose{}, false
	}
	cc, err := quicabi.UnmarshalConnectionClose(b)
	return cc, err == nil
}

// explainClose turns err into a [PeerClosedError] or a [LocalCloseError]
// when the connection has closed: the kernel says so with ENOTCONN, EPIPE
// or ECONNRESET, but with EINVAL for the calls that only an establishing
// socket takes (installing a secret, reading or setting the transport
// parameters), so after an EINVAL it asks hungUp whether the socket has
// closed (poll reports POLLHUP). closeInfo gives the close the kernel
// recorded; a record whose phrase is still marker (markClose; "" for none)
// is the kernel's own close, any other the peer's.
func explainClose(err error, hungUp func() bool, closeInfo func() (quicabi.ConnectionClose, bool), marker string) error {
	switch {
	case errors.Is(err, unix.ENOTCONN), errors.Is(err, unix.EPIPE), errors.Is(err, unix.ECONNRESET):
	case errors.Is(err, unix.EINVAL) && hungUp():
		err = fmt.Errorf("the socket is no longer establishing, the connection has closed: %w", err)
	default:
		return err
	}
	cc, ok := closeInfo()
	if !ok {
		return err
	}
	if marker != "" && cc.Phrase == marker {
		return fmt.Errorf("%w (%w)", &LocalCloseError{Code: cc.ErrCode, Frame: cc.Frame}, err)
	}
	return fmt.Errorf("%w (%w)", &PeerClosedError{Code: cc.ErrCode, Frame: cc.Frame, Phrase: cc.Phrase}, err)
}

// tpExtraPrefix marks the server's transport parameters (struct
// quic_transport_param) in a client's tls.SessionState.Extra.
const tpExtraPrefix = "kquic.dev/tp1:"

// prepareEarly decides on 0-RTT for a session crypto/tls is about to resume:
// it needs a caller with data to send and the server's transport parameters
// from the session's first connection, which the kernel must have before the
// early key (RFC 9000 §7.4.1: 0-RTT uses the remembered limits).
func (s *Session) prepareEarly(st *tls.SessionState) {
	if st == nil || !st.EarlyData {
		return
	}
	st.EarlyData = false
	if s.early == nil {
		return
	}
	for _, e := range st.Extra {
		if len(e) != len(tpExtraPrefix)+quicabi.SizeofTransportParam || string(e[:len(tpExtraPrefix)]) != tpExtraPrefix {
			continue
		}
		tp, err := quicabi.UnmarshalTransportParam(e[len(tpExtraPrefix):])
		if err != nil {
			return
		}
		tp.Remote = true
		if err := s.sock.SetOption(quicabi.QUIC_SOCKOPT_TRANSPORT_PARAM, tp.Marshal()); err != nil {
			return // no 0-RTT; the handshake goes on
		}
		st.EarlyData = true
		return
	}
}

// storeSession saves a session with the server's transport parameters,
// for 0-RTT on a later connection.
func (s *Session) storeSession(st *tls.SessionState) error {
	b, err := s.sock.GetOption(quicabi.QUIC_SOCKOPT_TRANSPORT_PARAM, quicabi.TransportParam{Remote: true}.Marshal())
	if err == nil && len(b) == quicabi.SizeofTransportParam {
		extra := st.Extra[:0:0]
		for _, e := range st.Extra {
			if len(e) < len(tpExtraPrefix) || string(e[:len(tpExtraPrefix)]) != tpExtraPrefix {
				extra = append(extra, e)
			}
		}
		st.Extra = append(extra, append([]byte(tpExtraPrefix), b...))
	}
	if err := s.q.StoreSession(st); err != nil {
		return &Error{"store the session", err}
	}
	return nil
}

// EarlyDataAccepted reports whether 0-RTT was used: on a client, that it
// sent 0-RTT data (see [ClientEarly]) and the server accepted it; on a
// server, that it accepted the client's 0-RTT data (the kernel delivers that
// data once the handshake has completed).
func (s *Session) EarlyDataAccepted() bool { return s.usedEarly && !s.RejectedEarlyData }

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
	var err error
	for ev := s.q.NextEvent(); ev.Kind != tls.QUICNoEvent; ev = s.q.NextEvent() {
		if ev.Kind == tls.QUICStoreSession && err == nil {
			err = s.storeSession(ev.SessionState)
		}
	}
	return err
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
