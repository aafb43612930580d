//go:build linux

package http3_test

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"kquic.dev/internal/browser"
	"kquic.dev/internal/testcerts"
	"kquic.dev/internal/testenv"
	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

// browserPage loads three sub-resources, then writes the protocol of the
// page and of each resource (Resource Timing's nextHopProtocol) into the
// DOM.
const browserPage = `<!DOCTYPE html><html><head><meta charset=utf-8><title>h3</title>
<link rel=icon href="data:,"><link rel=stylesheet href="/style.css"><script src="/app.js"></script></head>
<body><img src="/dot.svg" alt=dot><pre id=out></pre>
<script>
addEventListener("load", () => {
  const e = performance.getEntriesByType("navigation").concat(performance.getEntriesByType("resource"));
  document.getElementById("out").textContent = JSON.stringify(e.map(x => [new URL(x.name).pathname, x.nextHopProtocol]));
});
</script></body></html>`

// TestBrowser: headless Chromium fetches a page and its sub-resources over
// HTTP/3 from this server (kernel QUIC with -tags kquic), as the page
// itself reports.
func TestBrowser(t *testing.T) {
	requireImpl(t)
	// Measured: in the TCG guest (no KVM) headless Chromium starts but
	// did not answer the DevTools protocol's Runtime.enable within 5
	// minutes, so this test runs on the host over quic-go; over kernel
	// QUIC, TestBrowserKernelQUIC runs the server in a guest and Chromium
	// here.
	testenv.HostOnly(t, "headless Chromium under TCG emulation did not answer DevTools (Runtime.enable) within 5 minutes")
	chromium := testenv.Tool(t, "chromium", "chromium")
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, browserPage)
	})
	mux.HandleFunc("/style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		io.WriteString(w, "body { font-family: sans-serif }")
	})
	mux.HandleFunc("/app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		io.WriteString(w, "window.appLoaded = true;")
	})
	mux.HandleFunc("/dot.svg", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		io.WriteString(w, `<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4"/></svg>`)
	})
	var protos sync.Map // path: the protocol the server saw
	base := startServer(t, &http3.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos.Store(r.URL.Path, r.Proto)
		mux.ServeHTTP(w, r)
	})}, nil)
	cert, err := testcerts.Server()
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	spki := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	origin := strings.TrimPrefix(base, "https://")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := browser.Load(ctx, chromium, base+"/", `(document.getElementById("out") || {}).textContent || "not the test page: " + document.documentElement.innerText.slice(0, 300)`,
		"--proxy-server=direct://", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--enable-quic", "--origin-to-force-quic-on="+origin,
		"--ignore-certificate-errors-spki-list="+base64.StdEncoding.EncodeToString(spki[:]))
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if len(res.Errors) > 0 {
		t.Errorf("the page reported errors: %q", res.Errors)
	}
	var s string
	var entries [][2]string
	if err := json.Unmarshal(res.Value, &s); err != nil || json.Unmarshal([]byte(s), &entries) != nil {
		seen := map[string]any{}
		protos.Range(func(k, v any) bool { seen[k.(string)] = v; return true })
		t.Fatalf("the page wrote %s (errors %q; the server saw %v)", res.Value, res.Errors, seen)
	}
	t.Logf("%s: the page reports %v", quicnet.Implementation, entries)
	got := map[string]string{}
	for _, e := range entries {
		got[e[0]] = e[1]
	}
	for _, p := range []string{"/", "/style.css", "/app.js", "/dot.svg"} {
		if got[p] != "h3" {
			t.Errorf("%s: nextHopProtocol %q, want h3 (all: %v)", p, got[p], entries)
		}
		if v, _ := protos.Load(p); v != "HTTP/3.0" {
			t.Errorf("%s: the server saw %v", p, v)
		}
	}
}
