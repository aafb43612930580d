//go:build !kquic || !linux

package quicnet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
)

// quic-go is linked except in a -tags kquic build on Linux, which has
// kernel QUIC alone.
func init() {
	quicGoBackend = &backend{impl: QuicGo, listen: goListen, dial: goDial, dialEarly: goDialEarly, convert: goConvert}
}

func quicConfig(c *Config) *quic.Config {
	qc := &quic.Config{
		HandshakeIdleTimeout:  c.handshakeTimeout() / 2,
		MaxIdleTimeout:        c.MaxIdleTimeout,
		KeepAlivePeriod:       c.KeepAlivePeriod,
		EnableDatagrams:       c.EnableDatagrams,
		MaxIncomingStreams:    c.MaxIncomingStreams,
		MaxIncomingUniStreams: c.MaxIncomingUniStreams,
		Allow0RTT:             c.Allow0RTT,
	}
	if w := c.StreamReceiveWindow; w > 0 {
		qc.InitialStreamReceiveWindow, qc.MaxStreamReceiveWindow = w, w
	}
	if w := c.ConnectionReceiveWindow; w > 0 {
		qc.InitialConnectionReceiveWindow, qc.MaxConnectionReceiveWindow = w, w
	}
	return qc
}

// goListener runs a quic.Transport of its own, so that closing the listener
// leaves the accepted connections open (as with kernel QUIC and
// net.Listener): the transport and its socket close with the last of them.
type goListener struct {
	udp *net.UDPConn
	tr  *quic.Transport
	ln  goAcceptor

	mu       sync.Mutex
	closed   bool
	live     int // accepted connections still open
	shutOnce sync.Once
}

// goListen listens with a quic.Transport of its own. With early, Accept
// hands out connections as quic-go's EarlyListener does, before the
// handshake completes; without it, they come once it has, from an early
// listener where 0-RTT is allowed (quic-go takes 0-RTT only on one).
func goListen(network, addr string, tlsConf *tls.Config, conf *Config, early bool) (listenerImpl, error) {
	ua, err := net.ResolveUDPAddr(network, addr)
	if err != nil {
		return nil, err
	}
	udp, err := net.ListenUDP(network, ua)
	if err != nil {
		return nil, err
	}
	l, err := goListenOn(udp, udp, tlsConf, conf, early)
	if err != nil {
		udp.Close()
		return nil, err
	}
	return l, nil
}

// goListenOn listens on conn; own, if set, is conn, which the listener
// closes with its transport (nil: the caller's socket, left open).
func goListenOn(conn net.PacketConn, own *net.UDPConn, tlsConf *tls.Config, conf *Config, early bool) (*goListener, error) {
	tr := &quic.Transport{Conn: conn}
	var ln goAcceptor
	var err error
	switch {
	case early:
		ln, err = tr.ListenEarly(tlsConf, quicConfig(conf))
	case conf.Allow0RTT:
		// Only an early listener takes 0-RTT packets; its connections
		// are handed out once their handshake completes, as Listen's.
		var el *quic.EarlyListener
		if el, err = tr.ListenEarly(tlsConf, quicConfig(conf)); err == nil {
			ln = newCompleteAcceptor(el)
		}
	default:
		ln, err = tr.Listen(tlsConf, quicConfig(conf))
	}
	if err != nil {
		tr.Close()
		return nil, err
	}
	return &goListener{udp: own, tr: tr, ln: ln}, nil
}

func (l *goListener) accept(ctx context.Context) (*Conn, error) {
	qc, err := l.ln.Accept(ctx)
	if err != nil {
		if errors.Is(err, quic.ErrServerClosed) || errors.Is(err, quic.ErrTransportClosed) {
			return nil, ErrServerClosed
		}
		return nil, err
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		qc.CloseWithError(0, "")
		return nil, ErrServerClosed
	}
	l.live++
	l.mu.Unlock()
	context.AfterFunc(qc.Context(), l.release)
	return newGoConn(qc), nil
}

func (l *goListener) release() {
	l.mu.Lock()
	l.live--
	last := l.closed && l.live == 0
	l.mu.Unlock()
	if last {
		l.shutdown()
	}
}

func (l *goListener) close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	err := l.ln.Close() // waits for the handshakes in progress
	for {               // close what completed but was not accepted
		qc, aerr := l.ln.Accept(context.Background())
		if aerr != nil {
			break
		}
		qc.CloseWithError(0, "")
	}
	l.mu.Lock()
	last := l.live == 0
	l.mu.Unlock()
	if last {
		l.shutdown()
	}
	return err
}

func (l *goListener) shutdown() {
	l.shutOnce.Do(func() {
		l.tr.Close()
		if l.udp != nil { // nil: the caller's socket (ListenConn)
			l.udp.Close()
		}
	})
}

func (l *goListener) addr() net.Addr { return l.ln.Addr() }

func goDial(ctx context.Context, addr string, tlsConf *tls.Config, conf *Config) (*Conn, error) {
	qc, err := quic.DialAddr(ctx, addr, tlsConf, quicConfig(conf))
	if err != nil {
		return nil, dialError(err)
	}
	return newGoConn(qc), nil
}

// dialEarly is quic-go's DialEarly: data is written on stream 0 before the
// handshake completes (in 0-RTT packets if the session cache allows), and
// written again on a new stream if the server rejected 0-RTT.
func goDialEarly(ctx context.Context, addr string, tlsConf *tls.Config, conf *Config, data []byte) (*Conn, streamImpl, error) {
	hctx, cancel := context.WithTimeout(ctx, conf.handshakeTimeout())
	defer cancel()
	qc, err := quic.DialAddrEarly(hctx, addr, tlsConf, quicConfig(conf))
	if err != nil {
		return nil, nil, dialError(err)
	}
	fail := func(err error) (*Conn, streamImpl, error) {
		qc.CloseWithError(0, "")
		return nil, goStream{}, err
	}
	// The handshake is bounded as Dial's: ctx and HandshakeTimeout.
	stop := context.AfterFunc(hctx, func() { qc.CloseWithError(0, "") })
	defer stop()
	s, err := qc.OpenStream()
	if err != nil {
		return fail(convertError(err))
	}
	_, werr := s.Write(data) // returns once sent, or when 0-RTT was rejected
	select {
	case <-qc.HandshakeComplete():
	case <-qc.Context().Done():
	}
	if hctx.Err() != nil {
		return fail(&HandshakeTimeoutError{err: context.Cause(hctx)})
	}
	if qc.Context().Err() != nil {
		return fail(dialError(context.Cause(qc.Context())))
	}
	if !qc.ConnectionState().Used0RTT {
		if werr == nil {
			_, werr = s.Write(nil) // tells whether the stream was reset for the rejection
		}
		if errors.Is(werr, quic.Err0RTTRejected) {
			if qc, err = qc.NextConnection(hctx); err != nil {
				return fail(dialError(err))
			}
			if s, err = qc.OpenStream(); err != nil {
				return fail(convertError(err))
			}
			_, werr = s.Write(data)
		}
	}
	if werr != nil {
		return fail(fmt.Errorf("quicnet: write the early data: %w", convertError(werr)))
	}
	return newGoConn(qc), goStream{s}, nil
}

// dialError converts a failed dial's error: a handshake that saw nothing
// for HandshakeIdleTimeout, or whose deadline passed, timed out, as kquic
// reports it.
func dialError(err error) error {
	if ie := (*quic.IdleTimeoutError)(nil); errors.As(err, &ie) || errors.Is(err, context.DeadlineExceeded) {
		return &HandshakeTimeoutError{err: err}
	}
	return convertError(err)
}

// goAcceptor is a quic-go listener whose Accept returns connections that
// completed their handshake.
type goAcceptor interface {
	Accept(context.Context) (*quic.Conn, error)
	Close() error
	Addr() net.Addr
}

// completeAcceptor hands out an early listener's connections once their
// handshake has completed: in the order they complete, and without one
// slow handshake holding the others back.
type completeAcceptor struct {
	el      *quic.EarlyListener
	ready   chan *quic.Conn
	closing chan struct{}
	loop    chan struct{} // closed when the accept loop has ended
	once    sync.Once
	err     error // the early listener's Accept error, once loop is closed
}

func newCompleteAcceptor(el *quic.EarlyListener) *completeAcceptor {
	a := &completeAcceptor{el: el, ready: make(chan *quic.Conn), closing: make(chan struct{}), loop: make(chan struct{})}
	go a.run()
	return a
}

func (a *completeAcceptor) run() {
	defer close(a.loop)
	for {
		qc, err := a.el.Accept(context.Background())
		if err != nil {
			a.err = err
			return
		}
		go a.await(qc)
	}
}

// await passes qc on once its handshake has completed, or closes it if the
// listener closes first.
func (a *completeAcceptor) await(qc *quic.Conn) {
	select {
	case <-qc.HandshakeComplete():
	case <-qc.Context().Done():
		return
	case <-a.closing:
		qc.CloseWithError(0, "")
		return
	}
	select {
	case a.ready <- qc:
	case <-a.closing:
		qc.CloseWithError(0, "")
	}
}

func (a *completeAcceptor) Accept(ctx context.Context) (*quic.Conn, error) {
	select {
	case qc := <-a.ready:
		return qc, nil
	case <-a.closing:
		return nil, quic.ErrServerClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (a *completeAcceptor) Close() error {
	var err error
	a.once.Do(func() {
		close(a.closing)
		err = a.el.Close()
		<-a.loop
	})
	return err
}

func (a *completeAcceptor) Addr() net.Addr { return a.el.Addr() }

func newGoConn(qc *quic.Conn) *Conn {
	cs := qc.ConnectionState()
	return &Conn{impl: goConn{qc}, kind: QuicGo, localDatagrams: cs.SupportsDatagrams.Local, remoteDatagrams: cs.SupportsDatagrams.Remote}
}

type goConn struct{ c *quic.Conn }

func (c goConn) acceptStream(ctx context.Context) (streamImpl, error) {
	s, err := c.c.AcceptStream(ctx)
	return goStream{s}, err
}

func (c goConn) acceptUniStream(ctx context.Context) (recvStreamImpl, error) {
	s, err := c.c.AcceptUniStream(ctx)
	return goRecvStream{s}, err
}

func (c goConn) openStream() (streamImpl, error) {
	s, err := c.c.OpenStream()
	return goStream{s}, err
}

func (c goConn) openStreamSync(ctx context.Context) (streamImpl, error) {
	s, err := c.c.OpenStreamSync(ctx)
	return goStream{s}, err
}

func (c goConn) openUniStream() (sendStreamImpl, error) {
	s, err := c.c.OpenUniStream()
	return goSendStream{s}, err
}

func (c goConn) openUniStreamSync(ctx context.Context) (sendStreamImpl, error) {
	s, err := c.c.OpenUniStreamSync(ctx)
	return goSendStream{s}, err
}

func (c goConn) sendDatagram(b []byte) error { return c.c.SendDatagram(b) }

func (c goConn) receiveDatagram(ctx context.Context) ([]byte, error) {
	return c.c.ReceiveDatagram(ctx)
}

func (c goConn) closeWithError(code ApplicationErrorCode, reason string) error {
	return c.c.CloseWithError(quic.ApplicationErrorCode(code), reason)
}

func (c goConn) tlsState() tls.ConnectionState      { return c.c.ConnectionState().TLS }
func (c goConn) used0RTT() bool                     { return c.c.ConnectionState().Used0RTT }
func (c goConn) localAddr() net.Addr                { return c.c.LocalAddr() }
func (c goConn) remoteAddr() net.Addr               { return c.c.RemoteAddr() }
func (c goConn) done() <-chan struct{}              { return c.c.Context().Done() }
func (c goConn) afterClose(f func())                { context.AfterFunc(c.c.Context(), f) }
func (c goConn) closeError() error                  { return convertError(context.Cause(c.c.Context())) }
func (c goConn) handshakeComplete() <-chan struct{} { return c.c.HandshakeComplete() }

type goStream struct{ s *quic.Stream }

func (s goStream) streamID() StreamID          { return StreamID(s.s.StreamID()) }
func (s goStream) read(p []byte) (int, error)  { return s.s.Read(p) }
func (s goStream) write(p []byte) (int, error) { return s.s.Write(p) }
func (s goStream) close() error                { return s.s.Close() }
func (s goStream) writeAndClose(p []byte) (int, error) {
	n, err := s.s.Write(p)
	if err != nil {
		return n, err
	}
	return n, s.s.Close()
}
func (s goStream) setReadDeadline(t time.Time) error  { return s.s.SetReadDeadline(t) }
func (s goStream) setWriteDeadline(t time.Time) error { return s.s.SetWriteDeadline(t) }
func (s goStream) cancelRead(code StreamErrorCode) error {
	s.s.CancelRead(quic.StreamErrorCode(code))
	return nil
}
func (s goStream) cancelWrite(code StreamErrorCode) error {
	s.s.CancelWrite(quic.StreamErrorCode(code))
	return nil
}

type goRecvStream struct{ s *quic.ReceiveStream }

func (s goRecvStream) streamID() StreamID                { return StreamID(s.s.StreamID()) }
func (s goRecvStream) read(p []byte) (int, error)        { return s.s.Read(p) }
func (s goRecvStream) setReadDeadline(t time.Time) error { return s.s.SetReadDeadline(t) }
func (s goRecvStream) cancelRead(code StreamErrorCode) error {
	s.s.CancelRead(quic.StreamErrorCode(code))
	return nil
}

type goSendStream struct{ s *quic.SendStream }

func (s goSendStream) streamID() StreamID                 { return StreamID(s.s.StreamID()) }
func (s goSendStream) write(p []byte) (int, error)        { return s.s.Write(p) }
func (s goSendStream) close() error                       { return s.s.Close() }
func (s goSendStream) setWriteDeadline(t time.Time) error { return s.s.SetWriteDeadline(t) }
func (s goSendStream) cancelWrite(code StreamErrorCode) error {
	s.s.CancelWrite(quic.StreamErrorCode(code))
	return nil
}

// goConvert turns quic-go's errors into this package's.
func goConvert(err error) (error, bool) {
	var (
		ae *quic.ApplicationError
		te *quic.TransportError
		ie *quic.IdleTimeoutError
		he *quic.HandshakeTimeoutError
		se *quic.StreamError
		le *quic.StreamLimitReachedError
		de *quic.DatagramTooLargeError
	)
	switch {
	case errors.As(err, &se):
		return &StreamError{StreamID: StreamID(se.StreamID), ErrorCode: StreamErrorCode(se.ErrorCode), Remote: se.Remote, err: err}, true
	case errors.As(err, &ae):
		return &ApplicationError{Remote: ae.Remote, ErrorCode: ApplicationErrorCode(ae.ErrorCode), ErrorMessage: ae.ErrorMessage, err: err}, true
	case errors.As(err, &ie):
		return &IdleTimeoutError{err: err}, true
	case errors.As(err, &he):
		return &HandshakeTimeoutError{err: err}, true
	case errors.As(err, &te):
		return &TransportError{Remote: te.Remote, ErrorCode: TransportErrorCode(te.ErrorCode), FrameType: te.FrameType, ErrorMessage: te.ErrorMessage, err: err}, true
	case errors.As(err, &le):
		return &StreamLimitReachedError{err: err}, true
	case errors.As(err, &de):
		return &DatagramTooLargeError{MaxDatagramPayloadSize: de.MaxDatagramPayloadSize, err: err}, true
	}
	return err, false
}
