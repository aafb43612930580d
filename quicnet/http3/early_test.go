package http3_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/quic-go/quic-go"
	quichttp3 "github.com/quic-go/quic-go/http3"

	"kquic.dev/internal/racedetect"
	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

// TestZeroRTT: with a session cache, the request that opens a second
// connection to a server that allows 0-RTT goes in 0-RTT if it is a GET
// (the server's connection says it took 0-RTT data), and waits for the
// handshake if it is a POST or the Transport has Disable0RTT (resumed,
// no 0-RTT). The handler sees it through the request's *quicnet.Conn.
func TestZeroRTT(t *testing.T) {
	srv := &http3.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs := r.Context().Value(http3.ConnContextKey).(*quicnet.Conn).ConnectionState()
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s resumed=%v 0rtt=%v body=%q", r.Method, cs.TLS.DidResume, cs.Used0RTT, body)
	})}
	base := startServer(t, srv, &quicnet.Config{Allow0RTT: true})
	for _, tc := range []struct {
		name    string
		disable bool // Transport.Disable0RTT
		method  string
		want    string // the second connection's request, as the handler saw it
	}{
		{name: "GET", method: http.MethodGet, want: `GET resumed=true 0rtt=true body=""`},
		{name: "HEAD-then-GET", method: http.MethodHead, want: `GET resumed=true 0rtt=true body=""`},
		{name: "POST", method: http.MethodPost, want: `POST resumed=true 0rtt=false body="post"`},
		{name: "Disable0RTT", disable: true, method: http.MethodGet, want: `GET resumed=true 0rtt=false body=""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if racedetect.Enabled && quicnet.Implementation() == "quic-go" && tc.method != http.MethodPost && !tc.disable {
				// quic-go's client opening streams in 0-RTT races with
				// its own handshake (quic-go/quic-go#4303, open): the
				// detector fails the test on it whatever this package
				// does. make test runs it again without the detector
				// in the guest.
				t.Skip("race detector on: no 0-RTT request over quic-go (quic-go/quic-go#4303)")
			}
			ctls, _ := tlsConfigs(t)
			cache := newTicketCache()
			ctls.ClientSessionCache = cache
			tr := &http3.Transport{TLSClientConfig: ctls, Disable0RTT: tc.disable}
			c := client(t, tr)
			get := func(method string) string {
				t.Helper()
				var body io.Reader
				if method == http.MethodPost {
					body = strings.NewReader("post")
				}
				req, err := http.NewRequestWithContext(ctxT(t), method, base+"/", body)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatalf("%s %s: %v", quicnet.Implementation(), method, err)
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatalf("%s %s: read the body: %v", quicnet.Implementation(), method, err)
				}
				return string(b)
			}
			if got := get(http.MethodGet); got != `GET resumed=false 0rtt=false body=""` {
				t.Errorf("first connection (no session yet): handler saw %s", got)
			}
			// The ticket comes after the handshake: wait for it, then
			// make the next request open a new connection.
			cache.wait(t)
			tr.CloseIdleConnections()
			if tc.method == http.MethodHead {
				// HEAD goes early too: the response has no body, so
				// the handler's report is read by a GET on the
				// same connection.
				get(http.MethodHead)
			} else if got := get(tc.method); got != tc.want {
				t.Errorf("second connection, %s first: handler saw %s, want %s", tc.method, got, tc.want)
			}
			if tc.method == http.MethodHead {
				if got := get(http.MethodGet); got != tc.want {
					t.Errorf("second connection, after HEAD: handler saw %s, want %s", got, tc.want)
				}
			}
		})
	}
}

// ticketCache is a session cache that tells when a session was stored.
type ticketCache struct {
	tls.ClientSessionCache
	stored chan struct{}
}

func newTicketCache() *ticketCache {
	return &ticketCache{ClientSessionCache: tls.NewLRUClientSessionCache(4), stored: make(chan struct{}, 16)}
}

func (c *ticketCache) Put(key string, cs *tls.ClientSessionState) {
	c.ClientSessionCache.Put(key, cs)
	if cs != nil {
		select {
		case c.stored <- struct{}{}:
		default:
		}
	}
}

// wait waits for a session to be stored.
func (c *ticketCache) wait(t *testing.T) {
	t.Helper()
	select {
	case <-c.stored:
	case <-ctxT(t).Done():
		t.Fatalf("%s: no session ticket stored in the client's cache", quicnet.Implementation())
	}
}

// TestInteropZeroRTT: this client's GET goes in 0-RTT to quic-go's http3
// server (in the guest, over kernel QUIC: the kernel's 0-RTT to quic-go),
// which says it took 0-RTT data; a POST resumes without it.
func TestInteropZeroRTT(t *testing.T) {
	type connKey struct{}
	base, tr := startQuicGoServerFor(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		qc := r.Context().Value(connKey{}).(*quic.Conn)
		select { // quic-go serves 0-RTT requests before the handshake completes
		case <-qc.HandshakeComplete():
		case <-r.Context().Done():
			return
		}
		cs := qc.ConnectionState()
		io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%s resumed=%v 0rtt=%v", r.Method, cs.TLS.DidResume, cs.Used0RTT)
	}), func(s *quichttp3.Server) {
		s.ConnContext = func(ctx context.Context, c *quic.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, c)
		}
	})
	ctls, _ := tlsConfigs(t)
	if tr.TLSClientConfig != nil {
		ctls = tr.TLSClientConfig
	}
	cache := newTicketCache()
	ctls.ClientSessionCache = cache
	tr.TLSClientConfig = ctls
	c := client(t, tr)
	do := func(method string) string {
		t.Helper()
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader("post")
		}
		req, err := http.NewRequestWithContext(ctxT(t), method, base+"/", body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			knownFailure(t, err)
			t.Fatalf("%s %s: %v", quicnet.Implementation(), method, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			knownFailure(t, err)
			t.Fatalf("%s %s: read the body: %v", quicnet.Implementation(), method, err)
		}
		return string(b)
	}
	if got, want := do(http.MethodGet), "GET resumed=false 0rtt=false"; got != want {
		t.Errorf("first connection: quic-go's handler saw %q, want %q", got, want)
	}
	for _, tc := range []struct{ method, want string }{
		{http.MethodGet, "GET resumed=true 0rtt=true"},
		{http.MethodPost, "POST resumed=true 0rtt=false"},
	} {
		cache.wait(t)
		tr.CloseIdleConnections()
		if got := do(tc.method); got != tc.want {
			t.Errorf("%s: a new connection opened by %s: quic-go's handler saw %q, want %q", quicnet.Implementation(), tc.method, got, tc.want)
		}
	}
}
