package http3_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go/quicvarint"

	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// TestShutdown: Shutdown sends GOAWAY, serves the request in flight, refuses
// later streams with H3_REQUEST_REJECTED, then closes with H3_NO_ERROR and
// returns.
func TestShutdown(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/wait", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		io.WriteString(w, "served")
	})
	srv := &http3.Server{Handler: mux}
	base := startServer(t, srv, nil)
	r := dialRaw(t, base, []byte{})
	ctrl, err := r.qc.AcceptUniStream(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	s := r.request(t, getFields("/wait"), true)
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(ctxT(t)) }()
	// The server's control stream: its type, SETTINGS, then GOAWAY.
	id, err := readGoAway(ctrl)
	if err != nil || id != uint64(s.StreamID())+4 {
		t.Fatalf("GOAWAY %d (%v), want %d", id, err, s.StreamID()+4)
	}
	late := r.request(t, getFields("/hello"), true)
	if got := resetCode(t, late); got != http3.ErrCodeRequestRejected {
		t.Errorf("a request after GOAWAY: reset with %v, want H3_REQUEST_REJECTED", got)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a request in flight", err)
	default:
	}
	close(release)
	if status, content, err := response(s); err != nil || status != "200" || string(content) != "served" {
		t.Errorf("the request in flight: %q %q %v", status, content, err)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v before the client closed", err)
	default:
	}
	r.qc.CloseWithError(quicnet.ApplicationErrorCode(http3.ErrCodeNoError), "")
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// TestShutdownTransport: this package's Transport closes the connection
// after a GOAWAY once its last response is read, so Shutdown returns.
func TestShutdownTransport(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/wait", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		io.WriteString(w, "served")
	})
	srv := &http3.Server{Handler: mux}
	base := startServer(t, srv, nil)
	c := client(t, nil)
	got := make(chan string, 1)
	go func() {
		_, b, err := fetch(ctxT(t), c, base+"/wait")
		if err != nil {
			t.Error(err)
		}
		got <- string(b)
	}()
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(ctxT(t)) }()
	close(release)
	if b := <-got; b != "served" {
		t.Errorf("the request in flight: %q", b)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

func readGoAway(s *quicnet.ReceiveStream) (uint64, error) {
	s.SetReadDeadline(time.Now().Add(time.Minute))
	br := quicvarint.NewReader(s)
	if typ, err := quicvarint.Read(br); err != nil || typ != 0 {
		return 0, fmt.Errorf("stream type %d, %v", typ, err)
	}
	for {
		typ, err := quicvarint.Read(br)
		if err != nil {
			return 0, err
		}
		l, err := quicvarint.Read(br)
		if err != nil {
			return 0, err
		}
		p := make([]byte, l)
		if _, err := io.ReadFull(br, p); err != nil {
			return 0, err
		}
		if typ == 0x07 {
			id, _, err := quicvarint.Parse(p)
			return id, err
		}
	}
}

// TestShutdownTimeout: a handler that does not finish makes Shutdown return
// its context's error, after closing the connection.
func TestShutdownTimeout(t *testing.T) {
	entered := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/forever", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done()
	})
	srv := &http3.Server{Handler: mux}
	base := startServer(t, srv, nil)
	c := client(t, nil)
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctxT(t), http.MethodGet, base+"/forever", nil)
		resp, err := c.Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	<-entered
	ctx, cancel := context.WithTimeout(ctxT(t), 200*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown: %v, want context.DeadlineExceeded", err)
	}
	if err := <-errc; err == nil {
		t.Error("the request in flight succeeded after the server closed")
	}
}

// TestSlowReader: a client that stops reading holds the handler in Write
// (flow control: the server keeps a bounded amount) until WriteTimeout.
func TestSlowReader(t *testing.T) {
	var written atomic.Int64
	werr := make(chan error, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/flood", func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 64<<10)
		for {
			n, err := w.Write(buf)
			written.Add(int64(n))
			if err != nil {
				werr <- err
				return
			}
		}
	})
	base := startServer(t, &http3.Server{Handler: mux, WriteTimeout: time.Second}, nil)
	r := dialRaw(t, base, []byte{})
	r.request(t, getFields("/flood"), true) // never read
	select {
	case err := <-werr:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("the handler's Write: %v, want os.ErrDeadlineExceeded", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the handler's Write did not fail within a minute")
	}
	// The stream's flow control window is what the server may have
	// handed to QUIC: a few MiB, never the whole flood.
	if n := written.Load(); n > 32<<20 {
		t.Errorf("the handler wrote %d bytes to a client that reads nothing", n)
	}
	t.Logf("%s: %d bytes written before the timeout", quicnet.Implementation(), written.Load())
}

// TestStreamLimit: the requests a connection has in flight are bounded by
// the server's QUIC stream limit.
func TestStreamLimit(t *testing.T) {
	var in, most atomic.Int64
	gate := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
		n := in.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		if n == 4 {
			close(gate)
		}
		<-gate
		in.Add(-1)
	})
	base := startServer(t, &http3.Server{Handler: mux}, &quicnet.Config{MaxIncomingStreams: 4})
	c := client(t, nil)
	var wg sync.WaitGroup
	for range 12 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctxT(t), http.MethodGet, base+"/hold", nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	if m := most.Load(); m != 4 {
		t.Errorf("at most %d requests at once, want the stream limit of 4", m)
	}
}

// TestHandlerErrors: a panic resets the stream with H3_INTERNAL_ERROR, a
// response short of its Content-Length is reset, a longer one is refused
// with http.ErrContentLength; the server carries on.
func TestHandlerErrors(t *testing.T) {
	writeErr := make(chan error, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/panic", func(w http.ResponseWriter, r *http.Request) { panic("test panic") })
	mux.HandleFunc("/short", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10")
		io.WriteString(w, "12345")
	})
	mux.HandleFunc("/long", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "3")
		_, err := io.WriteString(w, "12345")
		writeErr <- err
	})
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hi") })
	base := startServer(t, &http3.Server{Handler: mux, Logger: quietLogger}, nil)
	r := dialRaw(t, base, []byte{})
	if got := resetCode(t, r.request(t, getFields("/panic"), true)); got != http3.ErrCodeInternalError {
		t.Errorf("/panic: reset with %v, want H3_INTERNAL_ERROR", got)
	}
	if got := resetCode(t, r.request(t, getFields("/short"), true)); got != http3.ErrCodeInternalError {
		t.Errorf("/short: reset with %v, want H3_INTERNAL_ERROR", got)
	}
	r.request(t, getFields("/long"), true)
	if err := <-writeErr; !errors.Is(err, http.ErrContentLength) {
		t.Errorf("/long: Write: %v, want http.ErrContentLength", err)
	}
	resp, b := get(t, client(t, nil), base+"/hello")
	if resp.StatusCode != 200 || string(b) != "hi" {
		t.Errorf("after the handler errors: %s %q", resp.Status, b)
	}
}

// TestResponseWriter: informational responses, HEAD, sniffing, Flush, gzip
// decoding by the client.
func TestResponseWriter(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/early", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		io.WriteString(w, "<html>final</html>")
	})
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "gzip" {
			http.Error(w, "no gzip asked for", 400)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, "compressed hello")
		zw.Close()
	})
	mux.HandleFunc("/nocontent", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	base := startServer(t, &http3.Server{Handler: mux}, nil)
	c := client(t, nil)
	resp, b := get(t, c, base+"/early")
	if resp.StatusCode != 200 || string(b) != "<html>final</html>" || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("/early: %s %q, Content-Type %q", resp.Status, b, resp.Header.Get("Content-Type"))
	}
	req, _ := http.NewRequestWithContext(ctxT(t), http.MethodHead, base+"/early", nil)
	hr, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	hb, err := io.ReadAll(hr.Body)
	hr.Body.Close()
	if err != nil || len(hb) != 0 || hr.ContentLength != 18 {
		t.Errorf("HEAD: %q %v, ContentLength %d (want 0 bytes, 18)", hb, err, hr.ContentLength)
	}
	resp, b = get(t, c, base+"/gzip")
	if resp.StatusCode != 200 || string(b) != "compressed hello" || !resp.Uncompressed {
		t.Errorf("/gzip: %s %q, Uncompressed %v", resp.Status, b, resp.Uncompressed)
	}
	resp, b = get(t, c, base+"/nocontent")
	if resp.StatusCode != 204 || len(b) != 0 {
		t.Errorf("/nocontent: %s %q", resp.Status, b)
	}
}

// TestTransportReuse: one connection per origin, shared by sequential and
// concurrent requests; a closed connection is replaced.
func TestTransportReuse(t *testing.T) {
	var conns sync.Map
	mux := http.NewServeMux()
	mux.HandleFunc("/who", func(w http.ResponseWriter, r *http.Request) {
		qc := r.Context().Value(http3.ConnContextKey).(*quicnet.Conn)
		conns.Store(qc, true)
		io.WriteString(w, r.RemoteAddr)
	})
	base := startServer(t, &http3.Server{Handler: mux}, nil)
	tr := &http3.Transport{}
	c := client(t, tr)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, _, err := fetch(ctxT(t), c, base+"/who"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	n := 0
	conns.Range(func(k, v any) bool { n++; return true })
	if n != 1 {
		t.Errorf("20 requests to one origin came on %d connections, want 1", n)
	}
	tr.CloseIdleConnections()
	_, b := get(t, c, base+"/who")
	if !bytes.Contains(b, []byte("127.0.0.1")) {
		t.Errorf("after CloseIdleConnections: %q", b)
	}
	n = 0
	conns.Range(func(k, v any) bool { n++; return true })
	if n != 2 {
		t.Errorf("after CloseIdleConnections: %d connections, want a second one", n)
	}
}
