package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"kquic.dev/quicnet"
)

// serverConn is one connection a Server serves.
type serverConn struct {
	*conn
	srv  *Server
	ctx  context.Context      // requests' contexts derive from it
	tls  *tls.ConnectionState // the handshake's, once complete (nil: not when the connection came)
	addr string

	mu        sync.Mutex
	active    int    // requests in flight
	nextID    uint64 // the stream ID after the last accepted one
	goingAway bool
	goAwayID  uint64
	idle      *time.Timer
	handlers  sync.WaitGroup
}

func (s *Server) newServerConn(qc *quicnet.Conn) (*serverConn, error) {
	if s.shuttingDown() {
		qc.CloseWithError(quicnet.ApplicationErrorCode(ErrCodeNoError), "server closed")
		return nil, ErrServerClosed
	}
	if err := checkAdditionalSettings("Server.AdditionalSettings", s.AdditionalSettings); err != nil {
		qc.CloseWithError(quicnet.ApplicationErrorCode(ErrCodeInternalError), "")
		return nil, err
	}
	c, err := newConn(qc, true, settings{MaxFieldSectionSize: s.maxHeaderBytes(), Datagram: s.EnableDatagrams, Other: s.AdditionalSettings}, s.logger(), nil)
	if err != nil {
		qc.CloseWithError(quicnet.ApplicationErrorCode(ErrCodeInternalError), "")
		return nil, err
	}
	sc := &serverConn{conn: c, srv: s, addr: qc.RemoteAddr().String()}
	if handshakeDone(qc) {
		st := qc.ConnectionState().TLS
		sc.tls = &st
	}
	ctx := context.WithValue(qc.Context(), ServerContextKey, s)
	ctx = context.WithValue(ctx, http.LocalAddrContextKey, qc.LocalAddr())
	ctx = context.WithValue(ctx, ConnContextKey, qc)
	ctx = context.WithValue(ctx, RemoteAddrContextKey, qc.RemoteAddr())
	if s.ConnContext != nil {
		ctx = s.ConnContext(ctx, qc)
	}
	sc.ctx = ctx
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		sc.close(ErrCodeNoError, "server closed")
		return nil, ErrServerClosed
	}
	if s.conns == nil {
		s.conns = map[*serverConn]struct{}{}
	}
	s.conns[sc] = struct{}{}
	s.mu.Unlock()
	if s.IdleTimeout > 0 {
		sc.mu.Lock()
		sc.idle = time.AfterFunc(s.IdleTimeout, sc.idleExpired)
		sc.mu.Unlock()
	}
	return sc, nil
}

// serve accepts request streams until the connection ends, then waits for
// the handlers.
func (sc *serverConn) serve() error {
	defer sc.handlers.Wait()
	for {
		str, err := sc.qc.AcceptStream(context.Background())
		if err != nil {
			sc.mu.Lock()
			if sc.idle != nil {
				sc.idle.Stop()
			}
			sc.mu.Unlock()
			err = wrapError(err)
			if e, ok := errors.AsType[*Error](err); ok && e.ErrorCode == ErrCodeNoError {
				return nil
			}
			return err
		}
		id := uint64(str.StreamID())
		sc.mu.Lock()
		if sc.goingAway && id >= sc.goAwayID {
			sc.mu.Unlock()
			// After GOAWAY: not processed, so the client may retry it.
			str.CancelRead(quicnet.StreamErrorCode(ErrCodeRequestRejected))
			str.CancelWrite(quicnet.StreamErrorCode(ErrCodeRequestRejected))
			continue
		}
		sc.nextID = id + 4
		sc.active++
		if sc.idle != nil {
			sc.idle.Stop()
		}
		sc.handlers.Add(1)
		sc.mu.Unlock()
		go sc.handle(str)
	}
}

// requestDone counts a request out; the last one starts the idle timer.
//
// After a GOAWAY the server does not close the connection itself when
// the last request is done: closing would drop response data QUIC has
// not delivered yet. The client closes it (RFC 9114 §5.2; this package's
// Transport and quic-go's do), or Shutdown's context ends.
func (sc *serverConn) requestDone() {
	sc.mu.Lock()
	sc.active--
	if sc.active == 0 && sc.idle != nil {
		sc.idle.Reset(sc.srv.IdleTimeout)
	}
	sc.mu.Unlock()
	sc.handlers.Done()
}

func (sc *serverConn) idleExpired() {
	sc.mu.Lock()
	idle := sc.active == 0
	sc.mu.Unlock()
	if idle {
		sc.close(ErrCodeNoError, "idle")
	}
}

// goAway sends GOAWAY with the first stream ID not taken.
func (sc *serverConn) goAway() {
	sc.mu.Lock()
	if sc.goingAway {
		sc.mu.Unlock()
		return
	}
	sc.goingAway = true
	sc.goAwayID = sc.nextID
	sc.mu.Unlock()
	// The control stream's flow control may hold the frame back; Write
	// returns once the connection ends.
	go func() {
		if err := sc.sendGoAway(sc.goAwayID); err != nil {
			sc.close(ErrCodeNoError, "")
		}
	}()
}

// handle serves one request stream.
func (sc *serverConn) handle(str *quicnet.Stream) {
	defer sc.requestDone()
	srv := sc.srv
	if srv.ReadHeaderTimeout > 0 {
		str.SetReadDeadline(time.Now().Add(srv.ReadHeaderTimeout))
	}
	br := getReader(str)
	var b *body
	defer func() {
		// A body not read to its end may still be read by a goroutine
		// the handler left behind: its reader is not reused.
		if b == nil || b.eof.Load() {
			putReader(br)
		}
	}()
	bufp := getBuf()
	defer putBuf(bufp)
	p, err := readHeaders(br, sc.maxHeader, true, (*bufp)[:0])
	var m *message
	if err == nil {
		m, err = parseMessage(p, sc.maxHeader, true)
	}
	switch {
	case err == nil:
	case err == errHeaderTooLarge:
		// RFC 9114 §4.2.2: answer 431; the rest of the request is not
		// needed (H3_NO_ERROR, §4.1).
		str.CancelRead(quicnet.StreamErrorCode(ErrCodeNoError))
		rw := newResponseWriter(sc, str, nil)
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		rw.WriteHeader(http.StatusRequestHeaderFieldsTooLarge)
		rw.Write([]byte("431 request header fields too large\n"))
		rw.finish()
		rw.release()
		return
	case err == io.EOF, errors.Is(err, os.ErrDeadlineExceeded):
		str.CancelRead(quicnet.StreamErrorCode(ErrCodeRequestIncomplete))
		str.CancelWrite(quicnet.StreamErrorCode(ErrCodeRequestIncomplete))
		return
	default:
		sc.fail(err, str)
		return
	}
	req, err := m.request()
	if err != nil {
		sc.fail(err, str)
		return
	}
	str.SetReadDeadline(time.Time{})
	if srv.WriteTimeout > 0 {
		str.SetWriteDeadline(time.Now().Add(srv.WriteTimeout))
	}
	ctx, cancel := context.WithCancel(sc.ctx)
	defer cancel()
	req = req.WithContext(ctx)
	req.RemoteAddr = sc.addr
	if req.TLS = sc.tls; req.TLS == nil {
		// An early connection: a request that is not safe waits for the
		// handshake (see Server.ServeQUICConn).
		if !safeMethod(req.Method) && !sc.awaitHandshake(ctx) {
			str.CancelRead(quicnet.StreamErrorCode(ErrCodeRequestRejected))
			str.CancelWrite(quicnet.StreamErrorCode(ErrCodeRequestRejected))
			return
		}
		st := sc.qc.ConnectionState().TLS
		req.TLS = &st
	}
	b = &body{br: br, str: str, conn: sc.conn, server: true, contentLength: m.contentLength, trailer: req.Trailer}
	b.newTrailer = func() http.Header {
		req.Trailer = http.Header{}
		return req.Trailer
	}
	req.Body = &requestBody{b}
	rw := newResponseWriter(sc, str, req)
	defer rw.release()
	if !sc.serveHandler(rw, req) {
		return
	}
	rw.finish()
	if !b.eof.Load() && !b.closed.Load() && !atEnd(b, str) {
		// The handler did not read the whole request: it is not wanted
		// (RFC 9114 §4.1).
		b.closeWith(ErrCodeNoError)
	}
}

// atEnd reports whether the request's end has already arrived, unread (a
// GET's FIN after its HEADERS): then no STOP_SENDING is due.
func atEnd(b *body, str *quicnet.Stream) bool {
	str.SetReadDeadline(time.Now())
	var one [1]byte
	n, err := b.Read(one[:])
	return n == 0 && err == io.EOF
}

// serveHandler runs the handler; it reports false if it panicked (the
// stream is then reset with H3_INTERNAL_ERROR).
func (sc *serverConn) serveHandler(rw *responseWriter, req *http.Request) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			sc.srv.handlerPanicked(v, req)
			rw.str.CancelWrite(quicnet.StreamErrorCode(ErrCodeInternalError))
			rw.str.CancelRead(quicnet.StreamErrorCode(ErrCodeInternalError))
			ok = false
		}
	}()
	sc.srv.handler().ServeHTTP(rw, req)
	return true
}

// requestBody is a request's Body; its Settingser gives the client's
// settings.
type requestBody struct{ b *body }

var _ Settingser = (*requestBody)(nil)

// ReceivedSettings returns a channel closed once the client's SETTINGS
// have arrived.
func (r *requestBody) ReceivedSettings() <-chan struct{} { return r.b.conn.settingsReceived() }

// Settings returns the client's settings (nil until they arrive).
func (r *requestBody) Settings() *Settings { return r.b.conn.peerSettingsPublic() }

func (r *requestBody) Read(p []byte) (int, error) { return r.b.Read(p) }

// Close tells the client that the rest of the request is not wanted.
func (r *requestBody) Close() error {
	r.b.closeWith(ErrCodeNoError)
	return nil
}

// handshakeDone reports whether qc's handshake has completed.
func handshakeDone(qc *quicnet.Conn) bool {
	select {
	case <-qc.HandshakeComplete():
		return true
	default:
		return false
	}
}

// safeMethod reports whether a request with this method may be served
// from 0-RTT data, before the handshake completes: the safe methods of
// RFC 9110 §9.2.1, which a replay cannot turn into a second action.
func safeMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// awaitHandshake waits until the connection's handshake has completed; it
// reports false if the connection (or ctx) ended first.
func (sc *serverConn) awaitHandshake(ctx context.Context) bool {
	select {
	case <-sc.qc.HandshakeComplete():
		return true
	case <-ctx.Done():
		return false
	}
}
