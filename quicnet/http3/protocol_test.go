package http3_test

// The server against a client written frame by frame: what RFC 9114 says
// to ignore is ignored, and each violation ends the request or the
// connection with the RFC's code.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go/quicvarint"

	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

type rawConn struct {
	qc      *quicnet.Conn
	control *quicnet.SendStream
}

// dialRaw connects to base's server and, if settings is not nil, opens the
// control stream with that SETTINGS payload.
func dialRaw(t *testing.T, base string, settings []byte) *rawConn {
	t.Helper()
	ctls, _ := tlsConfigs(t)
	qc, err := quicnet.Dial(ctxT(t), strings.TrimPrefix(base, "https://"), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qc.CloseWithError(0, "") })
	r := &rawConn{qc: qc}
	if settings != nil {
		r.control = r.uni(t, 0x00, frame(0x04, settings))
	}
	return r
}

// uni opens a unidirectional stream of type typ and sends b on it.
func (r *rawConn) uni(t *testing.T, typ uint64, b []byte) *quicnet.SendStream {
	t.Helper()
	s, err := r.qc.OpenUniStreamSync(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	// A write error is the server closing the connection, which the
	// tests then check.
	s.Write(append(quicvarint.Append(nil, typ), b...))
	return s
}

// request opens a request stream and sends b, then FIN if fin.
func (r *rawConn) request(t *testing.T, b []byte, fin bool) *quicnet.Stream {
	t.Helper()
	s, err := r.qc.OpenStreamSync(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	s.SetDeadline(time.Now().Add(time.Minute))
	if _, err := s.Write(b); err != nil {
		t.Fatal(err)
	}
	if fin {
		s.Close()
	}
	return s
}

// closeCode waits for the server to close the connection and returns the
// code, or fails.
func (r *rawConn) closeCode(t *testing.T) http3.ErrCode {
	t.Helper()
	select {
	case <-r.qc.Context().Done():
	case <-time.After(time.Minute):
		t.Fatal("the server did not close the connection within a minute")
	}
	err := context.Cause(r.qc.Context())
	ae, ok := errors.AsType[*quicnet.ApplicationError](err)
	if !ok || !ae.Remote {
		t.Fatalf("connection ended with %v, not the server's application close", err)
	}
	return http3.ErrCode(ae.ErrorCode)
}

func frame(typ uint64, payload []byte) []byte {
	b := quicvarint.Append(nil, typ)
	b = quicvarint.Append(b, uint64(len(payload)))
	return append(b, payload...)
}

// fields QPACK-encodes name, value pairs as a HEADERS frame.
func fields(kv ...string) []byte {
	var buf bytes.Buffer
	enc := qpack.NewEncoder(&buf)
	for i := 0; i+1 < len(kv); i += 2 {
		enc.WriteField(qpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return frame(0x01, buf.Bytes())
}

func getFields(path string, extra ...string) []byte {
	return fields(append([]string{":method", "GET", ":scheme", "https", ":authority", "server.test", ":path", path}, extra...)...)
}

// response reads a response: its status, content and trailers, skipping
// unknown frames.
func response(s *quicnet.Stream) (status string, content []byte, err error) {
	br := bufio.NewReader(s)
	var buf bytes.Buffer
	for {
		typ, err := quicvarint.Read(br)
		if err == io.EOF {
			return status, buf.Bytes(), nil
		}
		if err != nil {
			return status, buf.Bytes(), err
		}
		l, err := quicvarint.Read(br)
		if err != nil {
			return status, buf.Bytes(), err
		}
		p := make([]byte, l)
		if _, err := io.ReadFull(br, p); err != nil {
			return status, buf.Bytes(), err
		}
		switch typ {
		case 0x00:
			buf.Write(p)
		case 0x01:
			next := qpack.NewDecoder().Decode(p)
			for {
				f, err := next()
				if err != nil {
					break
				}
				if f.Name == ":status" && status == "" || f.Name == ":status" && status[0] == '1' {
					status = f.Value
				}
			}
		}
	}
}

// resetCode reads s to its end and returns the code of the server's reset,
// or fails.
func resetCode(t *testing.T, s *quicnet.Stream) http3.ErrCode {
	t.Helper()
	_, _, err := response(s)
	se, ok := errors.AsType[*quicnet.StreamError](err)
	if !ok || !se.Remote {
		t.Fatalf("stream %d: %v, want a reset by the server", s.StreamID(), err)
	}
	return http3.ErrCode(se.ErrorCode)
}

func okServer(t *testing.T, srv *http3.Server) string {
	if srv.Handler == nil {
		srv.Handler = testHandler(make(chan error, 1))
	}
	return startServer(t, srv, nil)
}

// TestIgnored: unknown settings, frames on every stream, unknown and
// reserved stream types are ignored.
func TestIgnored(t *testing.T) {
	base := okServer(t, &http3.Server{})
	settings := append(quicvarint.Append(quicvarint.Append(nil, 0x1f*3+0x21), 7), quicvarint.Append(quicvarint.Append(nil, 0x4242), 1)...)
	r := dialRaw(t, base, settings)
	r.control.Write(frame(0x1f*5+0x21, []byte("grease on the control stream")))
	r.control.Write(frame(0x0d, quicvarint.Append(nil, 0))) // MAX_PUSH_ID: this server does not push
	unknown := r.uni(t, 0x1f*9+0x21, []byte("an unknown stream type"))
	defer unknown.CancelWrite(0)
	r.uni(t, 0x02, nil) // a QPACK encoder stream with nothing to say
	req := frame(0x21, []byte("before"))
	req = append(req, frame(0x1f*2+0x21, make([]byte, 100<<10))...) // a large unknown frame
	req = append(req, getFields("/hello?name=raw")...)
	req = append(req, frame(0x21, []byte("after"))...)
	s := r.request(t, req, true)
	status, content, err := response(s)
	if err != nil || status != "200" || string(content) != "hello raw" {
		t.Fatalf("GET with unknown frames: %q %q %v", status, content, err)
	}
	body := append(fields(":method", "POST", ":scheme", "https", ":authority", "server.test", ":path", "/hash", "content-length", "6"), frame(0x00, []byte("abc"))...)
	body = append(body, frame(0x21, []byte("between"))...)
	body = append(body, frame(0x00, []byte("def"))...)
	body = append(body, frame(0x00, nil)...)
	s = r.request(t, body, true)
	status, content, err = response(s)
	if err != nil || status != "200" || !strings.HasPrefix(string(content), "6 bef57ec7f53a6d40beb640a780a639c83bc29ac8a9816f1fc6c5c6dcd93c4721") {
		t.Fatalf("POST with unknown frames: %q %q %v", status, content, err)
	}
	// The unknown stream is refused with H3_STREAM_CREATION_ERROR (or
	// simply read): writing on must not end the connection.
	if r.qc.Context().Err() != nil {
		t.Fatalf("the connection ended: %v", context.Cause(r.qc.Context()))
	}
}

// TestConnectionErrors: each violation closes the connection with its code.
func TestConnectionErrors(t *testing.T) {
	base := okServer(t, &http3.Server{})
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, r *rawConn)
		want http3.ErrCode
	}{
		{"DATA before HEADERS", func(t *testing.T, r *rawConn) { r.request(t, frame(0x00, []byte("x")), true) }, http3.ErrCodeFrameUnexpected},
		{"SETTINGS on a request stream", func(t *testing.T, r *rawConn) { r.request(t, frame(0x04, nil), true) }, http3.ErrCodeFrameUnexpected},
		{"HTTP/2 frame type", func(t *testing.T, r *rawConn) { r.request(t, frame(0x06, make([]byte, 8)), true) }, http3.ErrCodeFrameUnexpected},
		{"truncated HEADERS", func(t *testing.T, r *rawConn) { r.request(t, getFields("/hello")[:10], true) }, http3.ErrCodeFrameError},
		{"truncated DATA", func(t *testing.T, r *rawConn) {
			b := append(fields(":method", "POST", ":scheme", "https", ":authority", "a", ":path", "/hash"), frame(0x00, []byte("12345"))[:4]...)
			r.request(t, b, true)
		}, http3.ErrCodeFrameError},
		{"undecodable field section", func(t *testing.T, r *rawConn) { r.request(t, frame(0x01, []byte{0x05, 0x00, 0x80}), true) }, http3.ErrCodeQPACKDecompressionFailed},
		{"no SETTINGS first", func(t *testing.T, r *rawConn) { r.uni(t, 0x00, frame(0x07, quicvarint.Append(nil, 0))) }, http3.ErrCodeMissingSettings},
		{"second SETTINGS", func(t *testing.T, r *rawConn) { r.control.Write(frame(0x04, nil)) }, http3.ErrCodeFrameUnexpected},
		{"HTTP/2 setting", func(t *testing.T, r *rawConn) { r.uni(t, 0x00, frame(0x04, []byte{0x02, 0x00})) }, http3.ErrCodeSettingsError},
		{"setting twice", func(t *testing.T, r *rawConn) { r.uni(t, 0x00, frame(0x04, []byte{0x06, 0x10, 0x06, 0x10})) }, http3.ErrCodeSettingsError},
		{"DATA on the control stream", func(t *testing.T, r *rawConn) { r.control.Write(frame(0x00, nil)) }, http3.ErrCodeFrameUnexpected},
		{"control stream closed", func(t *testing.T, r *rawConn) { r.control.Close() }, http3.ErrCodeClosedCriticalStream},
		{"second control stream", func(t *testing.T, r *rawConn) { r.uni(t, 0x00, frame(0x04, nil)) }, http3.ErrCodeStreamCreationError},
		{"push stream from a client", func(t *testing.T, r *rawConn) { r.uni(t, 0x01, quicvarint.Append(nil, 0)) }, http3.ErrCodeStreamCreationError},
		{"QPACK stream closed", func(t *testing.T, r *rawConn) { r.uni(t, 0x03, nil).Close() }, http3.ErrCodeClosedCriticalStream},
		{"huge SETTINGS", func(t *testing.T, r *rawConn) { r.uni(t, 0x00, frame(0x04, make([]byte, 20<<10))) }, http3.ErrCodeExcessiveLoad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var settings []byte
			if !strings.Contains(tc.name, "SETTINGS first") && !strings.Contains(tc.name, "setting") && !strings.Contains(tc.name, "huge SETTINGS") {
				settings = []byte{}
			}
			r := dialRaw(t, base, settings)
			tc.do(t, r)
			if got := r.closeCode(t); got != tc.want {
				t.Errorf("closed with %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMessageErrors: a malformed request resets its stream with
// H3_MESSAGE_ERROR; the connection carries on.
func TestMessageErrors(t *testing.T) {
	base := okServer(t, &http3.Server{})
	r := dialRaw(t, base, []byte{})
	post := func(extra ...string) []byte {
		return fields(append([]string{":method", "POST", ":scheme", "https", ":authority", "a", ":path", "/hash"}, extra...)...)
	}
	for _, tc := range []struct {
		name string
		req  []byte
	}{
		{"uppercase name", getFields("/hello", "X-Upper", "1")},
		{"connection-specific field", getFields("/hello", "connection", "close")},
		{"te other than trailers", getFields("/hello", "te", "gzip")},
		{"no :path", fields(":method", "GET", ":scheme", "https", ":authority", "a")},
		{"unknown pseudo-header", getFields("/hello", ":nope", "1")},
		{"pseudo-header after a field", fields(":method", "GET", ":scheme", "https", "accept", "*/*", ":authority", "a", ":path", "/")},
		{"content longer than content-length", append(post("content-length", "3"), frame(0x00, []byte("abcdef"))...)},
		{"content shorter than content-length", append(post("content-length", "9"), frame(0x00, []byte("abc"))...)},
		{"pseudo-header in trailers", append(append(post(), frame(0x00, []byte("abc"))...), fields(":path", "/")...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := r.request(t, tc.req, true)
			if got := resetCode(t, s); got != http3.ErrCodeMessageError {
				t.Errorf("reset with %v, want H3_MESSAGE_ERROR", got)
			}
		})
	}
	s := r.request(t, getFields("/hello?name=still"), true)
	if status, content, err := response(s); err != nil || status != "200" || string(content) != "hello still" {
		t.Fatalf("after the malformed requests: %q %q %v", status, content, err)
	}
}

// TestHeaderLimit: a field section above MaxHeaderBytes gets 431, and the
// server's SETTINGS_MAX_FIELD_SECTION_SIZE stops this client from sending
// one.
func TestHeaderLimit(t *testing.T) {
	base := okServer(t, &http3.Server{MaxHeaderBytes: 4096})
	r := dialRaw(t, base, []byte{})
	for _, big := range [][]byte{
		getFields("/hello", "x-big", strings.Repeat("a", 5000)), // a frame longer than the limit
		getFields("/hello", "x-big", strings.Repeat("a", 1000), "x-b", strings.Repeat("b", 1000), "x-c", strings.Repeat("c", 1000), "x-d", strings.Repeat("d", 1000), "x-e", strings.Repeat("e", 100)), // decodes larger
	} {
		s := r.request(t, big, true)
		if status, _, err := response(s); err != nil || status != "431" {
			t.Errorf("%d-byte frame: status %q, %v; want 431", len(big), status, err)
		}
	}
	c := client(t, nil)
	req, _ := http.NewRequestWithContext(ctxT(t), http.MethodGet, base+"/hello", nil)
	req.Header.Set("X-Big", strings.Repeat("z", 20<<10))
	_, err := c.Do(req)
	if err == nil || !strings.Contains(err.Error(), "SETTINGS_MAX_FIELD_SECTION_SIZE of 4096") {
		t.Errorf("a 20 KiB header to a server that takes 4096 bytes: %v, want the client to refuse it", err)
	}
}

// TestReadHeaderTimeout: a request stream whose header does not come in
// time is reset with H3_REQUEST_INCOMPLETE; the connection stays.
func TestReadHeaderTimeout(t *testing.T) {
	base := okServer(t, &http3.Server{ReadHeaderTimeout: 300 * time.Millisecond})
	r := dialRaw(t, base, []byte{})
	start := time.Now()
	s := r.request(t, getFields("/hello")[:3], false) // part of a frame, no FIN
	if got := resetCode(t, s); got != http3.ErrCodeRequestIncomplete {
		t.Errorf("reset with %v, want H3_REQUEST_INCOMPLETE", got)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("reset after %v, before the 300ms timeout", d)
	}
	s = r.request(t, getFields("/hello?name=ok"), true)
	if status, content, err := response(s); err != nil || status != "200" || string(content) != "hello ok" {
		t.Fatalf("after the timeout: %q %q %v", status, content, err)
	}
}

// TestIdleTimeout: a connection without requests for IdleTimeout is
// closed with H3_NO_ERROR, not while a request is in flight.
func TestIdleTimeout(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/wait", func(w http.ResponseWriter, r *http.Request) { <-release })
	base := okServer(t, &http3.Server{IdleTimeout: 200 * time.Millisecond, Handler: mux})
	r := dialRaw(t, base, []byte{})
	s := r.request(t, getFields("/wait"), true)
	time.Sleep(600 * time.Millisecond) // three timeouts with a request in flight
	if err := r.qc.Context().Err(); err != nil {
		t.Fatalf("closed with a request in flight: %v", context.Cause(r.qc.Context()))
	}
	close(release)
	if status, _, err := response(s); err != nil || status != "200" {
		t.Fatalf("the request: %q %v", status, err)
	}
	if got := r.closeCode(t); got != http3.ErrCodeNoError {
		t.Errorf("closed with %v, want H3_NO_ERROR", got)
	}
}
