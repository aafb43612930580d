package http3_test

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"testing"
	"time"

	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

// TestAltSvc: an HTTPS server over TCP (HTTP/2) beside the HTTP/3 server
// announces it in Alt-Svc, with SetQUICHeaders or AltSvcHandler, as an
// nginx with `add_header Alt-Svc` does; a client reads the field from the
// TCP response and fetches the same path over HTTP/3 at the advertised
// port.
func TestAltSvc(t *testing.T) {
	if got, want := http3.AltSvc(443, 0), `h3=":443"; ma=2592000`; got != want {
		t.Errorf("AltSvc(443, 0) = %s, want %s", got, want)
	}
	if got, want := http3.AltSvc(8443, time.Hour), `h3=":8443"; ma=3600`; got != want {
		t.Errorf("AltSvc(8443, time.Hour) = %s, want %s", got, want)
	}
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "page over "+r.Proto)
	})
	h3srv := &http3.Server{Handler: page}
	h3base := startServer(t, h3srv, nil)
	u, err := url.Parse(h3base)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	h3 := client(t, nil)
	// Serve has registered its listener once a request is answered:
	// SetQUICHeaders then finds its port.
	if got := getBody(t, h3, h3base+"/"); got != "page over HTTP/3.0" {
		t.Fatalf("HTTP/3: %q", got)
	}

	for _, tc := range []struct {
		name    string
		handler http.Handler
	}{
		{"SetQUICHeaders", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := h3srv.SetQUICHeaders(w.Header()); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			page.ServeHTTP(w, r)
		})},
		{"AltSvcHandler", http3.AltSvcHandler(page, port)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctls, stls := tlsConfigs(t)
			ts := httptest.NewUnstartedServer(tc.handler)
			ts.EnableHTTP2 = true
			ts.TLS = &tls.Config{Certificates: stls.Certificates}
			ts.StartTLS()
			t.Cleanup(ts.Close)
			ctls.NextProtos = nil
			tcp := &http.Client{Transport: &http.Transport{TLSClientConfig: ctls, ForceAttemptHTTP2: true}}
			t.Cleanup(tcp.CloseIdleConnections)

			resp, err := tcp.Get(ts.URL + "/index.html")
			if err != nil {
				t.Fatalf("over TCP: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(body) != "page over HTTP/2.0" {
				t.Fatalf("over TCP: %s %q, want 200 and the page over HTTP/2.0", resp.Status, body)
			}
			alt := resp.Header.Get("Alt-Svc")
			if want := http3.AltSvc(port, 0); alt != want {
				t.Fatalf("Alt-Svc %q, want %q (the HTTP/3 server's UDP port)", alt, want)
			}
			// Follow it: same host, the advertised port, over HTTP/3.
			m := regexp.MustCompile(`(?:^|,\s*)h3=":(\d+)"`).FindStringSubmatch(alt)
			if m == nil {
				t.Fatalf("Alt-Svc %q announces no h3 endpoint", alt)
			}
			tu, _ := url.Parse(ts.URL)
			h3url := "https://" + net.JoinHostPort(tu.Hostname(), m[1]) + "/index.html"
			if got := getBody(t, h3, h3url); got != "page over HTTP/3.0" {
				t.Errorf("%s (from Alt-Svc, %s): %q, want the page over HTTP/3.0", h3url, quicnet.Implementation(), got)
			}
		})
	}
}

// getBody GETs u and returns the body of a 200 response.
func getBody(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, b := get(t, c, u)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %q", u, resp.Status, b)
	}
	return string(b)
}
