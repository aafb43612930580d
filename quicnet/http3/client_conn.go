package http3

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/net/http/httpguts"

	"kquic.dev/quicnet"
)

// clientConn is one connection of a Transport.
type clientConn struct {
	*conn
	t    *Transport
	addr string

	mu        sync.Mutex
	active    int
	goingAway bool
	goAwayID  uint64
}

// errRetry wraps the error of a request the server did not process.
var errRetry = errors.New("http3: retry")

type retryError struct{ err error }

func (e *retryError) Error() string        { return e.err.Error() }
func (e *retryError) Unwrap() error        { return e.err }
func (e *retryError) Is(target error) bool { return target == errRetry }

func (cc *clientConn) usable() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return !cc.goingAway && cc.qc.Context().Err() == nil
}

func (cc *clientConn) idle() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.active == 0
}

// goAway is called with the server's GOAWAY: no new request goes on this
// connection.
func (cc *clientConn) goAway(id uint64) {
	cc.mu.Lock()
	cc.goingAway, cc.goAwayID = true, id
	idle := cc.active == 0
	cc.mu.Unlock()
	cc.t.forget(cc)
	if idle {
		cc.close(ErrCodeNoError, "")
	}
}

// close takes the connection out of the pool and closes it.
func (cc *clientConn) close(code ErrCode, msg string) {
	cc.t.forget(cc)
	cc.conn.close(code, msg)
}

// refused reports whether the server did not process the request on
// stream id: a reset with H3_REQUEST_REJECTED, or an end of the
// connection after a GOAWAY that did not cover id.
func (cc *clientConn) refused(id quicnet.StreamID, err error) bool {
	if e, ok := errors.AsType[*Error](err); ok && e.Remote && e.ErrorCode == ErrCodeRequestRejected {
		return true
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.goingAway && uint64(id) >= cc.goAwayID
}

// roundTrip sends req on a new stream, or, when early is set, reads its
// response from early: the stream of an early dial, which carried req's
// header (encoded by encodeEarly) during the handshake.
func (cc *clientConn) roundTrip(req *http.Request, early *earlyRequest) (*http.Response, error) {
	ctx := req.Context()
	var str *quicnet.Stream
	if early != nil {
		str = early.str
	} else {
		var err error
		if str, err = cc.qc.OpenStreamSync(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			cc.t.forget(cc)
			return nil, &retryError{wrapError(err)} // nothing was sent
		}
	}
	cc.mu.Lock()
	cc.active++
	cc.mu.Unlock()
	rs := &clientStream{cc: cc, str: str, req: req, early: early}
	resp, err := rs.run(ctx)
	if err != nil {
		rs.end()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if cc.refused(str.StreamID(), err) {
			return nil, &retryError{err}
		}
		return nil, err
	}
	return resp, nil
}

// clientStream is one request and its response.
type clientStream struct {
	cc  *clientConn
	str *quicnet.Stream
	req *http.Request

	early      *earlyRequest // the header went with the dial (0-RTT)
	stopCancel func() bool   // stops the cancellation hook
	endOnce    sync.Once
	sendDone   chan struct{} // closed when the request body is sent (or abandoned)
}

// end counts the request out of its connection.
func (rs *clientStream) end() {
	rs.endOnce.Do(func() {
		if rs.stopCancel != nil {
			rs.stopCancel()
		}
		cc := rs.cc
		cc.mu.Lock()
		cc.active--
		closeNow := cc.active == 0 && cc.goingAway
		cc.mu.Unlock()
		if closeNow {
			// The server sent GOAWAY and waits for this side to
			// close once its last response is read.
			cc.close(ErrCodeNoError, "")
		}
	})
}

func (rs *clientStream) cancel(code ErrCode) {
	rs.str.CancelWrite(quicnet.StreamErrorCode(code))
	rs.str.CancelRead(quicnet.StreamErrorCode(code))
}

func (rs *clientStream) run(ctx context.Context) (*http.Response, error) {
	req, str := rs.req, rs.str
	rs.stopCancel = context.AfterFunc(ctx, func() {
		rs.cancel(ErrCodeRequestCanceled)
		if req.Body != nil {
			req.Body.Close()
		}
	})
	// As net/http: a Body with ContentLength 0 is of unknown length.
	hasBody := req.Body != nil && req.Body != http.NoBody
	gzip := wantGzip(rs.cc.t, req)
	if rs.early == nil {
		bufp := getBuf()
		defer putBuf(bufp)
		var e encoder
		e.buf = (*bufp)[:0]
		if err := rs.encodeHeader(&e, gzip, hasBody); err != nil {
			rs.cancel(ErrCodeRequestCanceled)
			return nil, err
		}
		if err := rs.cc.checkPeerLimit(ctx, e.size); err != nil {
			rs.cancel(ErrCodeRequestCanceled)
			return nil, err
		}
		// Without a body the FIN goes with the HEADERS frame, in one
		// stream write: over kernel QUIC, whose writes leave at once,
		// a FIN written after would take a packet of its own, and could
		// reach the server after its answer (then it sends STOP_SENDING,
		// RFC 9114 §4.1).
		write := str.Write
		if !hasBody {
			write = str.WriteAndClose
		}
		frame := e.frame(nil)
		if n, err := write(frame); err != nil && (hasBody || n < len(frame)) {
			return nil, wrapError(err)
		}
		// A WriteAndClose that wrote the whole request and failed to
		// close: the server's STOP_SENDING came first (it answers
		// without waiting for the FIN, RFC 9114 §4.1); the response
		// says the rest, as for Close below.
	}
	rs.sendDone = make(chan struct{})
	if hasBody {
		go rs.sendBody()
	} else {
		close(rs.sendDone)
		if req.Body != nil {
			req.Body.Close()
		}
		if rs.early != nil {
			// An error here is the server's STOP_SENDING: it answers
			// without the rest of the request (RFC 9114 §4.1), and
			// the response says the rest.
			str.Close()
		}
	}
	return rs.readResponse(ctx, gzip)
}

// wantGzip says whether t asks for gzip for req (and decodes it).
func wantGzip(t *Transport, req *http.Request) bool {
	return !t.DisableCompression && req.Header.Get("Accept-Encoding") == "" &&
		req.Header.Get("Range") == "" && req.Method != http.MethodHead
}

// encodeHeader encodes the request's field section.
func (rs *clientStream) encodeHeader(e *encoder, gzip, hasBody bool) error {
	req := rs.req
	e.reset()
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	host, err := httpguts.PunycodeHostPort(host)
	if err != nil {
		return fmt.Errorf("http3: invalid host %q: %w", host, err)
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if !validMethod(method) {
		return fmt.Errorf("http3: invalid method %q", method)
	}
	e.field(":method", method)
	if method == http.MethodConnect {
		e.field(":authority", host)
	} else {
		e.field(":scheme", "https")
		e.field(":authority", host)
		path := req.URL.RequestURI()
		if req.URL.Opaque != "" {
			path = req.URL.Opaque
		}
		e.field(":path", path)
	}
	if err := e.header(req.Header, func(k string) bool { return k == "Host" || k == "Content-Length" }); err != nil {
		return err
	}
	if len(req.Trailer) > 0 {
		keys := make([]string, 0, len(req.Trailer))
		for k := range req.Trailer {
			keys = append(keys, http.CanonicalHeaderKey(k))
		}
		e.field("trailer", strings.Join(keys, ","))
	}
	if hasBody && req.ContentLength > 0 {
		e.field("content-length", strconv.FormatInt(req.ContentLength, 10))
	}
	if gzip {
		e.field("accept-encoding", "gzip")
	}
	if _, ok := req.Header["User-Agent"]; !ok {
		e.field("user-agent", "Go-http-client/3 (kquic.dev/quicnet/http3)")
	}
	return nil
}

func validMethod(m string) bool {
	for i := 0; i < len(m); i++ {
		if !httpguts.IsTokenRune(rune(m[i])) {
			return false
		}
	}
	return m != ""
}

// sendBody sends the request body in DATA frames, then its trailers and
// FIN. A body that fails, or does not match its ContentLength, resets
// the stream with H3_REQUEST_CANCELLED.
func (rs *clientStream) sendBody() {
	defer close(rs.sendDone)
	req, str := rs.req, rs.str
	defer req.Body.Close()
	bufp := getBuf()
	defer putBuf(bufp)
	buf := (*bufp)[:cap(*bufp)]
	var sent int64
	for {
		n, err := req.Body.Read(buf[maxFrameHeaderLen:])
		if n > 0 {
			sent += int64(n)
			if req.ContentLength > 0 && sent > req.ContentLength {
				rs.str.CancelWrite(quicnet.StreamErrorCode(ErrCodeRequestCanceled))
				return
			}
			hdr := appendFrameHeader(nil, frameData, uint64(n)) // short: on the stack
			start := maxFrameHeaderLen - len(hdr)
			copy(buf[start:], hdr)
			if _, werr := str.Write(buf[start : maxFrameHeaderLen+n]); werr != nil {
				return // reset by the peer, canceled, or the connection ended
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			rs.str.CancelWrite(quicnet.StreamErrorCode(ErrCodeRequestCanceled))
			return
		}
	}
	if req.ContentLength > 0 && sent != req.ContentLength {
		rs.str.CancelWrite(quicnet.StreamErrorCode(ErrCodeRequestCanceled))
		return
	}
	if len(req.Trailer) > 0 {
		var e encoder
		e.reset()
		if err := e.header(req.Trailer, nil); err != nil {
			rs.str.CancelWrite(quicnet.StreamErrorCode(ErrCodeRequestCanceled))
			return
		}
		if _, err := str.Write(e.frame(nil)); err != nil {
			return
		}
	}
	str.Close()
}

// readResponse reads the response's header (after any 1xx) and returns
// the response with its streaming body.
func (rs *clientStream) readResponse(ctx context.Context, gzipped bool) (*http.Response, error) {
	cc, str := rs.cc, rs.str
	br := getReader(str)
	var m *message
	for {
		hbuf := getBuf()
		p, err := readHeaders(br, cc.maxHeader, false, (*hbuf)[:0])
		if err == nil {
			m, err = parseMessage(p, cc.maxHeader, false)
		}
		putBuf(hbuf)
		if err == io.EOF {
			err = &streamError{Code: ErrCodeMessageError, Msg: "the response stream ended before a header"}
		}
		if err == errHeaderTooLarge {
			err = &streamError{Code: ErrCodeExcessiveLoad, Msg: fmt.Sprintf("response header larger than Transport.MaxResponseHeaderBytes (%d)", cc.maxHeader)}
		}
		if err != nil {
			putReader(br)
			return nil, cc.fail(err, str)
		}
		if m.status[0] != '1' {
			break
		}
		// 1xx: informational, the final response follows.
	}
	code, _ := strconv.Atoi(m.status)
	resp := &http.Response{
		Status:        m.status + " " + http.StatusText(code),
		StatusCode:    code,
		Proto:         "HTTP/3.0",
		ProtoMajor:    3,
		Header:        m.header,
		ContentLength: m.contentLength,
		Request:       rs.req,
	}
	st := cc.qc.ConnectionState().TLS
	resp.TLS = &st
	resp.Trailer = declaredTrailers(m.header)
	cl := m.contentLength
	noBody := rs.req.Method == http.MethodHead || code == http.StatusNoContent || code == http.StatusNotModified
	if noBody {
		cl = 0 // any DATA would be malformed
	}
	b := &body{br: br, str: str, conn: cc.conn, contentLength: cl, trailer: resp.Trailer}
	b.newTrailer = func() http.Header {
		resp.Trailer = http.Header{}
		return resp.Trailer
	}
	b.onEOF = func() {
		putReader(br)
		rs.end()
	}
	b.mapErr = func(err error) error {
		rs.end()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	var rb io.ReadCloser = &responseBody{b: b, rs: rs}
	if gzipped && resp.Header.Get("Content-Encoding") == "gzip" && !noBody {
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
		rb = &gzipBody{body: rb}
	}
	resp.Body = rb
	return resp, nil
}

// responseBody is a response's Body.
type responseBody struct {
	b  *body
	rs *clientStream
}

func (r *responseBody) Read(p []byte) (int, error) { return r.b.Read(p) }

// Close stops reading: if the body was not read to its end, the server is
// told to stop sending (H3_REQUEST_CANCELLED).
func (r *responseBody) Close() error {
	r.b.closeWith(ErrCodeRequestCanceled)
	r.rs.end()
	return nil
}

// gzipBody decodes a gzip response as it is read.
type gzipBody struct {
	body io.ReadCloser
	zr   *gzip.Reader
	err  error
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.zr == nil {
		zr, err := gzip.NewReader(g.body)
		if err != nil {
			g.err = err
			return 0, err
		}
		g.zr = zr
	}
	n, err := g.zr.Read(p)
	if err != nil {
		g.err = err
	}
	return n, err
}

func (g *gzipBody) Close() error { return g.body.Close() }
