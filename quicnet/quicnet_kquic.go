//go:build linux && (kquic || !nokquic)

package quicnet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
	"unicode/utf8"

	"kquic.dev/handshake"
	"kquic.dev/kquic"
)

// Kernel QUIC is linked on Linux unless built with -tags nokquic (and
// -tags kquic keeps it whatever else is asked).
func init() {
	kernelBackend = &backend{impl: Kernel, supported: kernelSupported, listen: kListen, dial: kDial, dialEarly: kDialEarly, convert: kConvert}
}

// kernelSupported is nil where the kernel opens IPPROTO_QUIC sockets, else
// an error matching errors.ErrUnsupported that says why.
func kernelSupported() error { return kquic.Supported() }

// initialMaxUDPPayload caps a client's first flight: the smallest maximum
// datagram size (RFC 9000 §14), which every QUIC server takes (quic-go's
// at most 1452; the module otherwise takes the route's MTU, 65536 on
// loopback). The server's max_udp_payload_size replaces it once its
// transport parameters arrive.
const initialMaxUDPPayload = 1200

// maxDatagramFrameSize is the max_datagram_frame_size a side with datagrams
// on advertises: quic-go's value (the kernel counts the whole packet
// against it, so any value above a packet means "no limit of our own").
const maxDatagramFrameSize = 16383

// maxReason is the longest close reason the kernel keeps.
const maxReason = 63

// kquicConfig maps a Config onto kquic's.
//
// InitialMaxUDPPayload is 1200 (initialMaxUDPPayload), so that a
// kernel QUIC client reaches a quic-go server on loopback.
//
// StreamDataNoDelay is always on, as quic-go has no such delay: without it
// the kernel holds a write smaller than a packet while any ack-eliciting
// packet is unacknowledged (outqueue.c, quic_outq_delay_check), so on a
// fresh connection the client's request waited for the ACK of its
// NEW_CONNECTION_ID frames, the server's SETTINGS for the ACK of its
// HANDSHAKE_DONE, and the response for the (delayed) ACK of those SETTINGS:
// a setup of 2 round trips took about 4.
func kquicConfig(tlsConf *tls.Config, c *Config) (*kquic.Config, error) {
	kc := &kquic.Config{TLS: tlsConf, HandshakeTimeout: c.handshakeTimeout(), KeepAlive: c.KeepAlivePeriod, Allow0RTT: c.Allow0RTT,
		StreamDataNoDelay: true, InitialMaxUDPPayload: initialMaxUDPPayload}
	kc.Transport.MaxIdleTimeout = c.MaxIdleTimeout
	if w := c.StreamReceiveWindow; w > 0 {
		if w < 1200 || w > 268435455 {
			return nil, fmt.Errorf("quicnet: Config.StreamReceiveWindow %d: kernel QUIC takes 1200..268435455", w)
		}
		kc.Transport.MaxStreamDataBidiLocal, kc.Transport.MaxStreamDataBidiRemote, kc.Transport.MaxStreamDataUni = w, w, w
	}
	if w := c.ConnectionReceiveWindow; w > 0 {
		if w < 1200 || w > 536870911 {
			return nil, fmt.Errorf("quicnet: Config.ConnectionReceiveWindow %d: kernel QUIC takes 1200..536870911", w)
		}
		kc.Transport.MaxData = w
	}
	if c.EnableDatagrams {
		kc.Transport.MaxDatagramFrameSize = maxDatagramFrameSize
	}
	var err error
	if kc.Transport.MaxStreamsBidi, err = streamLimit("MaxIncomingStreams", c.MaxIncomingStreams); err != nil {
		return nil, err
	}
	if kc.Transport.MaxStreamsUni, err = streamLimit("MaxIncomingUniStreams", c.MaxIncomingUniStreams); err != nil {
		return nil, err
	}
	return kc, nil
}

func streamLimit(name string, n int64) (uint16, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("quicnet: Config.%s %d: kernel QUIC cannot refuse all streams (use 1..4096, or 0 for its default of 100)", name, n)
	case n > 4096:
		return 0, fmt.Errorf("quicnet: Config.%s %d: kernel QUIC allows at most 4096", name, n)
	}
	return uint16(n), nil
}

// unsupported marks the error of a machine without kernel QUIC with
// errors.ErrUnsupported.
func unsupported(err error) error {
	if errors.Is(err, kquic.ErrNotSupported) {
		return fmt.Errorf("quicnet: %w: %w", errors.ErrUnsupported, err)
	}
	return err
}

type kListener struct {
	l         *kquic.Listener
	datagrams bool
}

// kListen listens on kernel QUIC. early changes nothing: kquic's Accept
// returns a connection once its handshake has completed, and the module
// holds 0-RTT data until then (see EarlyListener).
func kListen(network, addr string, tlsConf *tls.Config, conf *Config, early bool) (listenerImpl, error) {
	kc, err := kquicConfig(tlsConf, conf)
	if err != nil {
		return nil, err
	}
	l, err := kquic.Listen(network, addr, kc)
	if err != nil {
		return nil, unsupported(err)
	}
	return &kListener{l: l, datagrams: conf.EnableDatagrams}, nil
}

func (l *kListener) accept(ctx context.Context) (*Conn, error) {
	c, err := l.l.Accept(ctx)
	if err != nil {
		if errors.Is(err, kquic.ErrClosed) {
			return nil, ErrServerClosed
		}
		return nil, err
	}
	return newKConn(c, l.datagrams), nil
}

func (l *kListener) close() error   { return l.l.Close() }
func (l *kListener) addr() net.Addr { return l.l.Addr() }

func kDial(ctx context.Context, addr string, tlsConf *tls.Config, conf *Config) (*Conn, error) {
	kc, err := kquicConfig(tlsConf, conf)
	if err != nil {
		return nil, err
	}
	c, err := kquic.Dial(ctx, "udp", addr, kc)
	if err != nil {
		return nil, convertError(unsupported(err))
	}
	return newKConn(c, conf.EnableDatagrams), nil
}

func kDialEarly(ctx context.Context, addr string, tlsConf *tls.Config, conf *Config, data []byte) (*Conn, streamImpl, error) {
	kc, err := kquicConfig(tlsConf, conf)
	if err != nil {
		return nil, nil, err
	}
	c, s, err := kquic.DialEarly(ctx, "udp", addr, kc, data)
	if err != nil {
		return nil, nil, convertError(unsupported(err))
	}
	return newKConn(c, conf.EnableDatagrams), &kStreamState{s: s}, nil
}

func newKConn(c *kquic.Conn, datagrams bool) *Conn {
	remote := false
	if p, err := c.PeerTransportParameters(); err == nil {
		remote = p.MaxDatagramFrameSize > 0
	}
	return &Conn{impl: kConn{c}, kind: Kernel, localDatagrams: datagrams, remoteDatagrams: remote}
}

type kConn struct{ c *kquic.Conn }

func (c kConn) acceptStream(ctx context.Context) (streamImpl, error) {
	return stream(c.c.AcceptStream(ctx))
}

func (c kConn) acceptUniStream(ctx context.Context) (recvStreamImpl, error) {
	s, err := c.c.AcceptUniStream(ctx)
	return kRecvStream{s}, err
}

func (c kConn) openStream() (streamImpl, error) { return stream(c.c.OpenStream()) }

func (c kConn) openStreamSync(ctx context.Context) (streamImpl, error) {
	return stream(c.c.OpenStreamSync(ctx))
}

func (c kConn) openUniStream() (sendStreamImpl, error) {
	s, err := c.c.OpenUniStream()
	return kSendStream{s}, err
}

func (c kConn) openUniStreamSync(ctx context.Context) (sendStreamImpl, error) {
	s, err := c.c.OpenUniStreamSync(ctx)
	return kSendStream{s}, err
}

func (c kConn) sendDatagram(b []byte) error { return c.c.SendDatagram(b) }

func (c kConn) receiveDatagram(ctx context.Context) ([]byte, error) {
	return c.c.ReceiveDatagram(ctx)
}

// closeWithError closes with kquic's code of the same value: a code
// above kquic.MaxErrorCode (32 bits) is kquic's error, and nothing is sent.
func (c kConn) closeWithError(code ApplicationErrorCode, reason string) error {
	return c.c.CloseWithError(kquic.ApplicationErrorCode(code), cutReason(reason))
}

// cutReason shortens a close reason to what the kernel keeps: at most 63
// bytes, whole UTF-8 characters, no NUL.
func cutReason(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	if len(s) <= maxReason {
		return s
	}
	s = s[:maxReason]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

func (c kConn) tlsState() tls.ConnectionState { return c.c.ConnectionState() }
func (c kConn) used0RTT() bool                { return c.c.EarlyDataAccepted() }
func (c kConn) localAddr() net.Addr           { return c.c.LocalAddr() }
func (c kConn) remoteAddr() net.Addr          { return c.c.RemoteAddr() }
func (c kConn) done() <-chan struct{}         { return c.c.Done() }
func (c kConn) closeError() error             { return convertError(c.c.Err()) }

// handshakeComplete: kquic hands out connections whose handshake has
// completed.
func (c kConn) handshakeComplete() <-chan struct{} { return closedChan }

func (c kConn) afterClose(f func()) {
	go func() {
		<-c.c.Done()
		f()
	}()
}

// kStream is a bidirectional stream, kRecvStream and kSendStream the two
// ends of a unidirectional one, as kquic has them. kquic's CancelRead has quic-go's semantics: after it, Read returns this
// side's *StreamError, and after Read has ended it does nothing.
type kStream = *kStreamState

type kStreamState struct {
	s *kquic.Stream
}

func stream(s *kquic.Stream, err error) (streamImpl, error) {
	if err != nil {
		return nil, err
	}
	return &kStreamState{s: s}, nil
}

func (s *kStreamState) streamID() StreamID                  { return StreamID(s.s.StreamID()) }
func (s *kStreamState) write(p []byte) (int, error)         { return s.s.Write(p) }
func (s *kStreamState) close() error                        { return s.s.Close() }
func (s *kStreamState) writeAndClose(p []byte) (int, error) { return s.s.WriteAndClose(p) }
func (s *kStreamState) setReadDeadline(t time.Time) error   { return s.s.SetReadDeadline(t) }
func (s *kStreamState) setWriteDeadline(t time.Time) error  { return s.s.SetWriteDeadline(t) }
func (s *kStreamState) read(p []byte) (int, error)          { return s.s.Read(p) }

func (s *kStreamState) cancelRead(code StreamErrorCode) error {
	return s.s.CancelRead(kquic.StreamErrorCode(code))
}

func (s *kStreamState) cancelWrite(code StreamErrorCode) error {
	return s.s.CancelWrite(kquic.StreamErrorCode(code))
}

type kRecvStream struct{ s *kquic.ReceiveStream }

func (s kRecvStream) streamID() StreamID                { return StreamID(s.s.StreamID()) }
func (s kRecvStream) read(p []byte) (int, error)        { return s.s.Read(p) }
func (s kRecvStream) setReadDeadline(t time.Time) error { return s.s.SetReadDeadline(t) }

func (s kRecvStream) cancelRead(code StreamErrorCode) error {
	return s.s.CancelRead(kquic.StreamErrorCode(code))
}

type kSendStream struct{ s *kquic.SendStream }

func (s kSendStream) streamID() StreamID                 { return StreamID(s.s.StreamID()) }
func (s kSendStream) write(p []byte) (int, error)        { return s.s.Write(p) }
func (s kSendStream) close() error                       { return s.s.Close() }
func (s kSendStream) setWriteDeadline(t time.Time) error { return s.s.SetWriteDeadline(t) }

func (s kSendStream) cancelWrite(code StreamErrorCode) error {
	return s.s.CancelWrite(kquic.StreamErrorCode(code))
}

// kConvert turns kquic's errors into this package's.
func kConvert(err error) (error, bool) {
	var (
		ce *kquic.CloseError
		ie *kquic.IdleTimeoutError
		se *kquic.StreamError
		de *kquic.DatagramTooLargeError
		pe *handshake.PeerClosedError
		le *handshake.LocalCloseError
	)
	switch {
	case errors.As(err, &se):
		return &StreamError{StreamID: StreamID(se.StreamID), ErrorCode: StreamErrorCode(se.ErrorCode), Remote: se.Remote, err: err}, true
	case errors.As(err, &ce):
		if !ce.Application {
			return &TransportError{Remote: ce.Remote, ErrorCode: TransportErrorCode(ce.TransportErrorCode), FrameType: uint64(ce.FrameType), ErrorMessage: ce.Reason, err: err}, true
		}
		return &ApplicationError{Remote: ce.Remote, ErrorCode: ApplicationErrorCode(ce.ErrorCode), ErrorMessage: ce.Reason, err: err}, true
	case errors.As(err, &ie):
		return &IdleTimeoutError{err: err}, true
	case errors.Is(err, kquic.ErrStreamLimit):
		return &StreamLimitReachedError{err: err}, true
	case errors.Is(err, kquic.ErrDatagramsDisabled):
		return ErrDatagramsDisabled, true
	case errors.As(err, &de):
		return &DatagramTooLargeError{MaxDatagramPayloadSize: int64(de.Max), err: err}, true
	case errors.As(err, &pe):
		// The peer closed during the handshake: the kernel keeps no TLS
		// alert, so a rejected certificate or ALPN list arrives as the
		// close's code (CRYPTO_ERROR 0x100+alert from a quic-go peer).
		return &TransportError{Remote: true, ErrorCode: TransportErrorCode(pe.Code), FrameType: uint64(pe.Frame), ErrorMessage: pe.Phrase, err: err}, true
	case errors.As(err, &le) && (le.Code != 0 || le.Frame != 0):
		// Our kernel closed during the handshake, on the peer's error.
		return &TransportError{Remote: false, ErrorCode: TransportErrorCode(le.Code), FrameType: uint64(le.Frame), err: err}, true
	case errors.As(err, &le):
		return &IdleTimeoutError{err: err}, true
	case errors.Is(err, context.Canceled):
		return err, true // the caller gave up: no timeout
	case errors.Is(err, handshake.ErrTimeout):
		return &HandshakeTimeoutError{err: err}, true
	}
	return err, false
}
