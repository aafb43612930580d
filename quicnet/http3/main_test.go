package http3_test

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	quichttp3 "github.com/quic-go/quic-go/http3"

	"kquic.dev/internal/testcerts"
	"kquic.dev/internal/testenv"
	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := testenv.LeakedGoroutines(15*time.Second, testenv.QUICGoroutines...); leaked != "" {
			fmt.Fprintf(os.Stderr, "FAIL: goroutines left running after the tests:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// tlsConfigs returns a client and a server configuration with the test CA
// and the server's certificate (server.test, 127.0.0.1, ::1), for h3.
func tlsConfigs(t testing.TB) (client, server *tls.Config) {
	t.Helper()
	pool, err := testcerts.Pool()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := testcerts.Server()
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{RootCAs: pool, NextProtos: []string{http3.NextProtoH3}},
		&tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{http3.NextProtoH3}}
}

// drops holds each test's counter of the Handshake packets quic-go's
// client dropped (kernel QUIC builds).
var drops sync.Map

// ctxT bounds one test's requests: generous, a TCG guest moves a few MB/s.
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// startServer serves h with this package's Server on a quicnet listener on
// loopback (over the implementation quicnet chooses), and returns its base
// URL.
func startServer(t testing.TB, srv *http3.Server, conf *quicnet.Config) string {
	t.Helper()
	requireImpl(t)
	_, stls := tlsConfigs(t)
	ln, err := quicnet.Listen("udp", "127.0.0.1:0", stls, conf)
	if err != nil {
		t.Fatalf("%s: listen: %v", quicnet.Implementation(), err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != http3.ErrServerClosed {
			t.Errorf("ServeListener: %v, want ErrServerClosed", err)
		}
		ln.Close()
	})
	return "https://" + ln.Addr().String()
}

// startQuicGoServer serves h with quic-go's own http3.Server (0-RTT
// allowed); opts adjust the server (its EnableDatagrams turns the
// listener's QUIC datagrams on).
func startQuicGoServer(t testing.TB, h http.Handler, opts ...func(*quichttp3.Server)) string {
	t.Helper()
	_, stls := tlsConfigs(t)
	srv := &quichttp3.Server{Handler: h}
	for _, o := range opts {
		o(srv)
	}
	ln, err := quic.ListenAddrEarly("127.0.0.1:0", quichttp3.ConfigureTLSConfig(stls), &quic.Config{Allow0RTT: true, EnableDatagrams: srv.EnableDatagrams})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ln) }()
	t.Cleanup(func() {
		srv.Close()
		ln.Close()
		<-done
	})
	return "https://" + ln.Addr().String()
}

// client is this package's Transport in an http.Client.
func client(t testing.TB, tr *http3.Transport) *http.Client {
	t.Helper()
	requireImpl(t)
	if tr == nil {
		tr = &http3.Transport{}
	}
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig, _ = tlsConfigs(t)
	}
	t.Cleanup(func() { tr.Close() })
	return &http.Client{Transport: tr}
}

// quicGoClient is quic-go's own http3 client.
func quicGoClient(t testing.TB) *http.Client {
	t.Helper()
	ctls, _ := tlsConfigs(t)
	tr := &quichttp3.Transport{TLSClientConfig: ctls, QUICConfig: quicGoConfig(t)}
	t.Cleanup(func() { tr.Close() })
	return &http.Client{Transport: tr}
}

// testHandler is the handler every pairing of client and server runs:
//
//	/hello?name=x  "hello x", with the request's protocol in X-Proto
//	/hash          the request body's length and SHA-256
//	/big?n=N       N bytes of a pattern
//	/trailers      echoes the request's X-Req trailer in the body, and
//	               sends the body's SHA-256 as the X-Sum trailer
//	/stream        sends 1 KiB chunks until a write fails, then reports
//	               the error on errs
func testHandler(errs chan<- error) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Proto", r.Proto)
		io.WriteString(w, "hello "+r.URL.Query().Get("name"))
	})
	mux.HandleFunc("/hash", func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Length", strconv.Itoa(n))
		writePattern(w, int64(n))
	})
	mux.HandleFunc("/trailers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		h := sha256.New()
		if _, err := io.Copy(h, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		io.WriteString(w, "req trailer "+r.Trailer.Get("X-Req"))
		w.Header().Set("X-Sum", hex.EncodeToString(h.Sum(nil)))
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 1024)
		rc := http.NewResponseController(w)
		for {
			if _, err := w.Write(chunk); err != nil {
				errs <- err
				return
			}
			if err := rc.Flush(); err != nil {
				errs <- err
				return
			}
		}
	})
	return mux
}

// writePattern writes n bytes of a pattern that a reader can check.
func writePattern(w io.Writer, n int64) error {
	buf := make([]byte, 32<<10)
	for i := range buf {
		buf[i] = byte(i % 251)
	}
	for n > 0 {
		c := min(n, int64(len(buf)))
		if _, err := w.Write(buf[:c]); err != nil {
			return err
		}
		n -= c
	}
	return nil
}

// streamCode is the HTTP/3 code of a stream error, from this package, from
// quic-go's http3 or from either QUIC layer; -1 if err is none of them.
func streamCode(err error) int64 {
	if e, ok := errors.AsType[*http3.Error](err); ok {
		return int64(e.ErrorCode)
	}
	if e, ok := errors.AsType[*quichttp3.Error](err); ok {
		return int64(e.ErrorCode)
	}
	if e, ok := errors.AsType[*quic.StreamError](err); ok {
		return int64(e.ErrorCode)
	}
	if e, ok := errors.AsType[*quicnet.StreamError](err); ok {
		return int64(e.ErrorCode)
	}
	return -1
}
