package http3

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"kquic.dev/quicnet"
)

// recordStream is a request stream that records the response's stream
// writes: each Write, WriteAndClose and bare Close, in order.
type recordStream struct {
	ops    []string // "write", "write+fin", "fin", "reset"
	sizes  []int
	data   bytes.Buffer
	closed bool
}

func (s *recordStream) Write(p []byte) (int, error) {
	if s.closed {
		return 0, fmt.Errorf("write after FIN")
	}
	s.ops, s.sizes = append(s.ops, "write"), append(s.sizes, len(p))
	s.data.Write(p)
	return len(p), nil
}

func (s *recordStream) WriteAndClose(p []byte) (int, error) {
	if s.closed {
		return 0, fmt.Errorf("write after FIN")
	}
	s.ops, s.sizes = append(s.ops, "write+fin"), append(s.sizes, len(p))
	s.data.Write(p)
	s.closed = true
	return len(p), nil
}

func (s *recordStream) Close() error {
	if !s.closed {
		s.ops, s.sizes = append(s.ops, "fin"), append(s.sizes, 0)
		s.closed = true
	}
	return nil
}

func (s *recordStream) CancelWrite(quicnet.StreamErrorCode) error {
	s.ops, s.sizes = append(s.ops, "reset"), append(s.sizes, 0)
	return nil
}

func (s *recordStream) CancelRead(quicnet.StreamErrorCode) error { return nil }
func (s *recordStream) SetReadDeadline(time.Time) error          { return nil }
func (s *recordStream) SetWriteDeadline(time.Time) error         { return nil }

// content parses the recorded stream as a HEADERS frame, DATA frames and
// an optional trailing HEADERS frame, and returns the content.
func (s *recordStream) content(t *testing.T) []byte {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(s.data.Bytes()))
	var body []byte
	for i := 0; ; i++ {
		fh, err := readFrameHeader(br)
		if err == io.EOF {
			return body
		}
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		p := make([]byte, fh.Length)
		if _, err := io.ReadFull(br, p); err != nil {
			t.Fatalf("frame %d (type %#x, %d bytes): %v", i, fh.Type, fh.Length, err)
		}
		switch {
		case i == 0 && fh.Type != frameHeaders:
			t.Fatalf("first frame of type %#x, not HEADERS", fh.Type)
		case fh.Type == frameData:
			body = append(body, p...)
		}
	}
}

// TestResponseFINWithLastContent: whatever the body's size and the
// handler's writes, the FIN goes in the stream write of the last content
// (kernel QUIC's WriteAndClose), never alone after it: the QUIC module's
// nghttp3 client does not see a FIN that comes alone (TestNGHTTP3Client).
func TestResponseFINWithLastContent(t *testing.T) {
	sizes := []int{1, 1000, holdBack, bodyBufSize - 1, bodyBufSize, bodyBufSize + 1, 32 << 10, maxCopy, maxCopy + 1, 65536 + 32768, 100000, 300000, 1 << 20}
	chunks := []int{1 << 10, 16 << 10, 32 << 10, maxCopy + 1, 1 << 20}
	for _, size := range sizes {
		for _, chunk := range chunks {
			for _, declared := range []bool{false, true} {
				name := fmt.Sprintf("size=%d/chunk=%d/content-length=%v", size, chunk, declared)
				t.Run(name, func(t *testing.T) {
					str := &recordStream{}
					sc := &serverConn{conn: &conn{}, srv: &Server{}}
					w := newResponseWriter(sc, str, nil)
					defer w.release()
					if declared {
						w.Header().Set("Content-Length", strconv.Itoa(size))
					}
					want := make([]byte, size)
					for i := range want {
						want[i] = byte(i % 251)
					}
					for off := 0; off < size; off += chunk {
						if n, err := w.Write(want[off:min(off+chunk, size)]); err != nil || n != min(chunk, size-off) {
							t.Fatalf("Write at %d: %d, %v", off, n, err)
						}
					}
					w.finish()
					last := len(str.ops) - 1
					if last < 0 || str.ops[last] != "write+fin" || str.sizes[last] == 0 {
						t.Fatalf("stream writes %v of %v bytes: the last is not content with the FIN", str.ops, str.sizes)
					}
					for i, op := range str.ops[:last] {
						if op != "write" {
							t.Fatalf("stream writes %v: %q at %d", str.ops, op, i)
						}
					}
					if got := str.content(t); !bytes.Equal(got, want) {
						t.Fatalf("content of %d bytes, want %d", len(got), len(want))
					}
				})
			}
		}
	}
}

// TestResponseFINWithTrailers: with trailers the FIN goes with the
// trailers' HEADERS frame.
func TestResponseFINWithTrailers(t *testing.T) {
	str := &recordStream{}
	sc := &serverConn{conn: &conn{}, srv: &Server{}}
	w := newResponseWriter(sc, str, nil)
	defer w.release()
	w.Header().Set("Trailer", "X-Sum")
	w.Write(make([]byte, 100000))
	w.Header().Set("X-Sum", "abc")
	w.finish()
	if last := len(str.ops) - 1; str.ops[last] != "write+fin" {
		t.Fatalf("stream writes %v: the trailers do not carry the FIN", str.ops)
	}
	if got := len(str.content(t)); got != 100000 {
		t.Fatalf("content of %d bytes", got)
	}
}

// TestResponseFlushSendsAll: Flush sends all that was written, the bytes
// held back for the FIN included.
func TestResponseFlushSendsAll(t *testing.T) {
	str := &recordStream{}
	sc := &serverConn{conn: &conn{}, srv: &Server{}}
	w := newResponseWriter(sc, str, nil)
	defer w.release()
	w.WriteHeader(http.StatusOK)
	w.Write(make([]byte, 40000))
	if err := w.FlushError(); err != nil {
		t.Fatal(err)
	}
	if got := len(str.content(t)); got != 40000 {
		t.Fatalf("after Flush %d bytes of content were sent, want 40000", got)
	}
}
