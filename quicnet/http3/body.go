package http3

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"kquic.dev/quicnet"
)

// readerPool holds the buffered readers of request streams.
var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}

func getReader(r io.Reader) *bufio.Reader {
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

func putReader(br *bufio.Reader) {
	br.Reset(nil)
	readerPool.Put(br)
}

// readHeaders reads frames up to a HEADERS frame and returns its payload
// (in buf's space), skipping unknown frames. A HEADERS frame longer than
// max is errHeaderTooLarge, left unread; io.EOF means the stream ended
// before any.
func readHeaders(br *bufio.Reader, max uint64, server bool, buf []byte) ([]byte, error) {
	for {
		fh, err := readFrameHeader(br)
		if err != nil {
			return nil, err
		}
		switch {
		case fh.Type == frameHeaders:
			if max > 0 && fh.Length > max {
				return nil, errHeaderTooLarge
			}
			return readPayload(br, fh.Length, buf)
		case fh.Type == framePushPromise && !server:
			return nil, &connError{Code: ErrCodeIDError, Msg: "PUSH_PROMISE, though this client allowed no push"}
		case fh.Type == frameData:
			return nil, &connError{Code: ErrCodeFrameUnexpected, Msg: "DATA frame before HEADERS"}
		case isKnownFrame(fh.Type) || isHTTP2Frame(fh.Type):
			return nil, &connError{Code: ErrCodeFrameUnexpected, Msg: fmt.Sprintf("frame type %#x on a request stream", fh.Type)}
		default:
			if err := skipPayload(br, fh.Length); err != nil {
				return nil, err
			}
		}
	}
}

// isKnownFrame reports the frame types of RFC 9114.
func isKnownFrame(t uint64) bool {
	switch t {
	case frameData, frameHeaders, frameCancelPush, frameSettings, framePushPromise, frameGoAway, frameMaxPushID:
		return true
	}
	return false
}

// body reads a message's content from the DATA frames of a request
// stream, then its trailers. Its errors are final: a protocol violation
// resets the stream or closes the connection with the RFC's code.
type body struct {
	br   *bufio.Reader
	str  *quicnet.Stream
	conn *conn

	server        bool
	contentLength int64 // -1: not declared
	n             int64 // content read so far
	remaining     uint64
	trailer       http.Header // where trailers go
	newTrailer    func() http.Header
	err           error

	// onEOF runs once the whole message has been read.
	onEOF func()
	// mapErr, if set, turns a read error into what the reader sees
	// (the request's context error after a cancellation).
	mapErr func(error) error

	closed atomic.Bool // by Close, from any goroutine
	eof    atomic.Bool // the whole message was read
}

// Read reads content.
func (b *body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.closed.Load() {
		return 0, errBodyClosed
	}
	n, err := b.read(p)
	if err != nil {
		if err == io.EOF {
			b.err = io.EOF
			b.eof.Store(true)
			if b.onEOF != nil {
				b.onEOF()
			}
		} else {
			b.err = b.conn.fail(err, b.str)
			if b.mapErr != nil {
				b.err = b.mapErr(b.err)
			}
		}
		return n, b.err
	}
	return n, nil
}

var errBodyClosed = errors.New("http3: read on a closed body")

func (b *body) read(p []byte) (int, error) {
	for b.remaining == 0 {
		fh, err := readFrameHeader(b.br)
		if err == io.EOF {
			if b.contentLength >= 0 && b.n != b.contentLength {
				return 0, malformed("content of %d bytes where content-length says %d", b.n, b.contentLength)
			}
			return 0, io.EOF
		}
		if err != nil {
			return 0, err
		}
		switch {
		case fh.Type == frameData:
			b.remaining = fh.Length
		case fh.Type == frameHeaders:
			return 0, b.readTrailers(fh.Length)
		case fh.Type == framePushPromise && !b.server:
			return 0, &connError{Code: ErrCodeIDError, Msg: "PUSH_PROMISE, though this client allowed no push"}
		case isKnownFrame(fh.Type) || isHTTP2Frame(fh.Type):
			return 0, &connError{Code: ErrCodeFrameUnexpected, Msg: fmt.Sprintf("frame type %#x in a message's content", fh.Type)}
		default:
			if err := skipPayload(b.br, fh.Length); err != nil {
				return 0, err
			}
		}
	}
	if len(p) == 0 {
		return 0, nil
	}
	if uint64(len(p)) > b.remaining {
		p = p[:b.remaining]
	}
	n, err := b.br.Read(p)
	b.remaining -= uint64(n)
	b.n += int64(n)
	if b.contentLength >= 0 && b.n > b.contentLength {
		return 0, malformed("content longer than its content-length of %d bytes", b.contentLength)
	}
	if err != nil && n == 0 {
		return 0, truncated(err)
	}
	// With data, an error (the stream's end, read with its last bytes)
	// waits for the next call: the frame may be complete.
	return n, nil
}

// readTrailers reads the trailer section; nothing but unknown frames may
// follow it. It returns io.EOF at the end of the stream.
func (b *body) readTrailers(length uint64) error {
	if b.contentLength >= 0 && b.n != b.contentLength {
		return malformed("content of %d bytes where content-length says %d", b.n, b.contentLength)
	}
	if length > b.conn.maxHeader && b.conn.maxHeader > 0 {
		return malformed("trailers of %d bytes, more than the %d this side takes", length, b.conn.maxHeader)
	}
	p, err := readPayload(b.br, length, nil)
	if err != nil {
		return err
	}
	t := b.trailer
	if t == nil {
		t = http.Header{}
	}
	if err := parseTrailers(p, b.conn.maxHeader, t); err != nil {
		if err == errHeaderTooLarge {
			return malformed("trailers larger than the %d bytes this side takes", b.conn.maxHeader)
		}
		return err
	}
	if b.trailer == nil && b.newTrailer != nil {
		dst := b.newTrailer()
		for k, v := range t {
			dst[k] = v
		}
	}
	for {
		fh, err := readFrameHeader(b.br)
		if err != nil {
			return err // io.EOF: done
		}
		if isKnownFrame(fh.Type) || isHTTP2Frame(fh.Type) {
			return &connError{Code: ErrCodeFrameUnexpected, Msg: fmt.Sprintf("frame type %#x after the trailers", fh.Type)}
		}
		if err := skipPayload(b.br, fh.Length); err != nil {
			return err
		}
	}
}

// closeWith stops reading: the rest of the content is not wanted, and the
// peer is asked to stop sending with code (unless all was read).
func (b *body) closeWith(code ErrCode) {
	if b.closed.Swap(true) {
		return
	}
	if !b.eof.Load() {
		b.str.CancelRead(quicnet.StreamErrorCode(code))
	}
}
