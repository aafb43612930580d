package http3

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"kquic.dev/quicnet"
)

// bufPool holds the buffers of field sections and of response bodies.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, bodyBufSize); return &b }}

// bodyBufSize is how much of a response is kept before it is sent: a
// response that fits is sent with its Content-Length, in one write.
const bodyBufSize = 16 << 10

// maxCopy is the largest write copied behind its DATA frame header into
// one stream write; larger ones go out as two writes.
const maxCopy = 64 << 10

// holdBack is how much of the end of a Write that does not fit the buffer
// is kept rather than sent: whatever the body's size, some content is
// then left for the last stream write, which carries the FIN with it
// (finish). A FIN sent alone after the content costs a packet of its own
// over kernel QUIC, and the QUIC module's nghttp3 client (tests/http3_test)
// never sees it: it takes a 0-byte read with the FIN flag for nothing to
// read and waits for the end of the stream until the idle timeout.
const holdBack = 1 << 10

// respStream is what a responseWriter needs of its request stream: a
// *quicnet.Stream, or a recording fake in the tests.
type respStream interface {
	Write(p []byte) (int, error)
	WriteAndClose(p []byte) (int, error)
	Close() error
	CancelRead(code quicnet.StreamErrorCode) error
	CancelWrite(code quicnet.StreamErrorCode) error
	SetReadDeadline(t time.Time) error
	SetWriteDeadline(t time.Time) error
}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > 4*maxCopy {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

// statusText holds the :status values, so that sending one does not
// allocate.
var statusText = func() (s [1000]string) {
	for i := 100; i < 1000; i++ {
		s[i] = strconv.Itoa(i)
	}
	return
}()

// responseWriter is the http.ResponseWriter of a request: it keeps up to
// bodyBufSize of the body, then sends HEADERS and DATA frames.
type responseWriter struct {
	sc  *serverConn
	str respStream
	req *http.Request

	header        http.Header
	status        int
	wroteHeader   bool // the final status is set
	sentHeader    bool // its HEADERS frame is sent
	head          bool // a HEAD request: no content is sent
	noBody        bool // the status allows no content
	handlerDone   bool
	finSent       bool  // the FIN went with the last content (flush)
	contentLength int64 // declared by the handler; -1: none
	written       int64
	err           error

	bufp *[]byte // content not sent yet
	outp *[]byte // the frames of one stream write
	enc  encoder
}

func newResponseWriter(sc *serverConn, str respStream, req *http.Request) *responseWriter {
	w := &responseWriter{sc: sc, str: str, req: req, header: http.Header{}, contentLength: -1, bufp: getBuf(), outp: getBuf()}
	w.head = req != nil && req.Method == http.MethodHead
	return w
}

func (w *responseWriter) release() {
	if w.bufp != nil {
		putBuf(w.bufp)
		putBuf(w.outp)
		w.bufp, w.outp = nil, nil
	}
}

var _ Settingser = (*responseWriter)(nil)

// ReceivedSettings returns a channel closed once the client's SETTINGS
// have arrived.
func (w *responseWriter) ReceivedSettings() <-chan struct{} { return w.sc.settingsReceived() }

// Settings returns the client's settings (nil until they arrive).
func (w *responseWriter) Settings() *Settings { return w.sc.peerSettingsPublic() }

// Header returns the response's header; changes after WriteHeader (or the
// first Write) are not sent, except trailers.
func (w *responseWriter) Header() http.Header { return w.header }

// WriteHeader sends an informational (1xx) response at once, or sets the
// final status.
func (w *responseWriter) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("http3: invalid WriteHeader code %v", code))
	}
	if w.wroteHeader {
		w.sc.srv.logger().Warn("http3: superfluous WriteHeader call", "code", code)
		return
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		w.sendInformational(code)
		return
	}
	w.wroteHeader = true
	w.status = code
	w.noBody = code < 200 || code == http.StatusNoContent || code == http.StatusNotModified
	if cl := w.header.Get("Content-Length"); cl != "" {
		n, err := strconv.ParseInt(cl, 10, 64)
		if err == nil && n >= 0 {
			w.contentLength = n
		} else {
			w.header.Del("Content-Length")
		}
	}
}

func (w *responseWriter) sendInformational(code int) {
	if w.err != nil {
		return
	}
	w.enc.reset()
	w.enc.field(":status", statusText[code])
	if err := w.enc.header(w.header, nil); err != nil {
		w.err = err
		return
	}
	_, err := w.str.Write(w.enc.frame((*w.outp)[:0]))
	w.err = wrapError(err)
}

// Write sends content (after the header, on the first call).
func (w *responseWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.noBody {
		return 0, http.ErrBodyNotAllowed
	}
	if w.contentLength >= 0 && w.written+int64(len(p)) > w.contentLength {
		return 0, http.ErrContentLength
	}
	w.written += int64(len(p))
	if w.head {
		return len(p), nil
	}
	if buf := *w.bufp; len(buf)+len(p) <= cap(buf) {
		*w.bufp = append(buf, p...)
		return len(p), nil
	}
	// Send what is kept and p but its last holdBack bytes, which stay
	// for the next write, or for the last one, with the FIN.
	keep := min(len(p), holdBack)
	if err := w.flush(p[:len(p)-keep], false); err != nil {
		return 0, err
	}
	*w.bufp = append(*w.bufp, p[len(p)-keep:]...)
	return len(p), nil
}

// WriteString is Write of a string.
func (w *responseWriter) WriteString(s string) (int, error) {
	if buf := *w.bufp; w.wroteHeader && w.err == nil && !w.noBody && !w.head && len(buf)+len(s) <= cap(buf) &&
		(w.contentLength < 0 || w.written+int64(len(s)) <= w.contentLength) {
		*w.bufp = append(buf, s...)
		w.written += int64(len(s))
		return len(s), nil
	}
	return w.Write([]byte(s))
}

// flush sends the HEADERS frame if it is not sent yet, and the kept
// content and p as one DATA frame. With fin (p is nil) the FIN goes in the
// same stream write, and finSent is set: over kernel QUIC, whose writes
// leave at once, a FIN written after would take a packet of its own.
func (w *responseWriter) flush(p []byte, fin bool) error {
	out := (*w.outp)[:0]
	if !w.sentHeader {
		var err error
		if out, err = w.appendHeader(out, p); err != nil {
			w.err = err
			w.str.CancelWrite(quicnet.StreamErrorCode(ErrCodeInternalError))
			return err
		}
	}
	buf := *w.bufp
	if n := len(buf) + len(p); n > 0 && !w.head {
		out = appendFrameHeader(out, frameData, uint64(n))
		out = append(out, buf...)
	}
	*w.bufp = buf[:0]
	if len(p) <= maxCopy {
		out = append(out, p...)
		p = nil
	}
	*w.outp = out[:0]
	if len(out) > 0 {
		var err error
		if fin && len(p) == 0 {
			_, err = w.str.WriteAndClose(out)
			w.finSent = err == nil
		} else {
			_, err = w.str.Write(out)
		}
		if err != nil {
			w.err = wrapError(err)
			return w.err
		}
	}
	if len(p) > 0 {
		if _, err := w.str.Write(p); err != nil {
			w.err = wrapError(err)
			return w.err
		}
	}
	return nil
}

// appendHeader appends the response's HEADERS frame: the status, a Date,
// the header (with a Content-Type sniffed from the content when the handler
// set none, and a Content-Length when the handler is done and all the
// content is known).
func (w *responseWriter) appendHeader(out, p []byte) ([]byte, error) {
	h := w.header
	if !w.noBody && w.written > 0 && !w.head {
		if _, ok := h["Content-Type"]; !ok && h.Get("Content-Encoding") == "" {
			data := *w.bufp
			if len(data) == 0 {
				data = p
			}
			h.Set("Content-Type", http.DetectContentType(data))
		}
	}
	if w.handlerDone && w.contentLength < 0 && !w.noBody && !w.hasTrailers() && (!w.head || w.written > 0) {
		h.Set("Content-Length", strconv.FormatInt(w.written, 10))
	}
	e := &w.enc
	e.reset()
	e.field(":status", statusText[w.status])
	// A Date field, as net/http's server and quic-go's add, unless the
	// handler set one or a Date key (nil: no Date at all).
	if _, ok := h["Date"]; !ok {
		e.field("date", httpDate())
	}
	if err := e.header(h, isTrailerKey); err != nil {
		return out, err
	}
	ctx := context.Background()
	if w.req != nil {
		ctx = w.req.Context()
	}
	if err := w.sc.checkPeerLimit(ctx, e.size); err != nil {
		return out, err
	}
	w.sentHeader = true
	return e.frame(out), nil
}

func isTrailerKey(k string) bool { return strings.HasPrefix(k, http.TrailerPrefix) }

// hasTrailers reports whether the handler declared trailers.
func (w *responseWriter) hasTrailers() bool {
	if _, ok := w.header["Trailer"]; ok {
		return true
	}
	for k := range w.header {
		if isTrailerKey(k) {
			return true
		}
	}
	return false
}

// trailers encodes the trailer section: the fields the Trailer header
// announced and those named with http.TrailerPrefix.
func (w *responseWriter) trailers() (http.Header, bool) {
	if !w.hasTrailers() {
		return nil, false
	}
	t := http.Header{}
	for _, v := range w.header["Trailer"] {
		for _, k := range strings.Split(v, ",") {
			k = http.CanonicalHeaderKey(strings.TrimSpace(k))
			if vv, ok := w.header[k]; ok && k != "" {
				t[k] = vv
			}
		}
	}
	for k, vv := range w.header {
		if isTrailerKey(k) {
			t[http.CanonicalHeaderKey(strings.TrimPrefix(k, http.TrailerPrefix))] = vv
		}
	}
	return t, len(t) > 0
}

// finish ends the response once the handler returned: what is kept, the
// trailers and FIN.
func (w *responseWriter) finish() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.handlerDone = true
	if w.err != nil {
		return
	}
	short := w.contentLength >= 0 && w.written < w.contentLength && !w.head
	if !w.sentHeader || len(*w.bufp) > 0 {
		if w.flush(nil, !short && !w.hasTrailers()) != nil || w.finSent {
			return
		}
	}
	if short {
		// The response is short of its Content-Length: a client would
		// take it as complete and malformed; reset it instead.
		w.str.CancelWrite(quicnet.StreamErrorCode(ErrCodeInternalError))
		return
	}
	if t, ok := w.trailers(); ok {
		e := &w.enc
		e.reset()
		if err := e.header(t, nil); err != nil {
			w.sc.srv.logger().Warn("http3: trailers not sent", "error", err)
		} else {
			// The FIN goes with the trailers, in one stream write.
			w.str.WriteAndClose(e.frame((*w.outp)[:0]))
			return
		}
	}
	w.str.Close()
}

// Flush sends what was written so far (http.Flusher).
func (w *responseWriter) Flush() { w.FlushError() }

// FlushError sends what was written so far, and says if it could not (it
// is what http.ResponseController.Flush calls). If the handler writes
// nothing after its last Flush, the FIN goes in a stream write of its own.
func (w *responseWriter) FlushError() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return w.err
	}
	return w.flush(nil, false)
}

// SetReadDeadline sets the deadline of reading the request body
// (http.ResponseController.SetReadDeadline).
func (w *responseWriter) SetReadDeadline(t time.Time) error { return w.str.SetReadDeadline(t) }

// SetWriteDeadline sets the deadline of writing the response
// (http.ResponseController.SetWriteDeadline).
func (w *responseWriter) SetWriteDeadline(t time.Time) error { return w.str.SetWriteDeadline(t) }

// EnableFullDuplex does nothing: an HTTP/3 handler may always read the
// request while it writes the response.
func (w *responseWriter) EnableFullDuplex() error { return nil }

var (
	_ http.ResponseWriter = (*responseWriter)(nil)
	_ http.Flusher        = (*responseWriter)(nil)
)

// dateNow holds the Date field of the current second, so that responses
// do not format it each.
var dateNow atomic.Pointer[dateValue]

type dateValue struct {
	sec int64
	v   string
}

// httpDate returns the Date field's value for now (RFC 9110 §5.6.7).
func httpDate() string {
	now := time.Now()
	if d := dateNow.Load(); d != nil && d.sec == now.Unix() {
		return d.v
	}
	d := &dateValue{sec: now.Unix(), v: now.UTC().Format(http.TimeFormat)}
	dateNow.Store(d)
	return d.v
}
