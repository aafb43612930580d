package quicnet_test

// HTTP/3 over the implementation compiled in (kquic.dev/quicnet/http3):
// the same requests on quic-go and on kernel QUIC. The http3 package's own
// tests hold the protocol's details and the interop with quic-go's http3.

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

func TestHTTP3(t *testing.T) {
	ctls, stls := tlsConfigs(t)
	ctls, stls = ctls.Clone(), stls.Clone()
	ctls.NextProtos, stls.NextProtos = []string{http3.NextProtoH3}, []string{http3.NextProtoH3}
	ln := listen(t, stls, &quicnet.Config{MaxIncomingStreams: 8})
	mux := http.NewServeMux()
	mux.HandleFunc("/hash", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%s %d", r.Proto, n)
		w.Header().Set("X-Sum", fmt.Sprintf("%x", h.Sum(nil)))
	})
	srv := &http3.Server{Handler: mux}
	served := make(chan error, 1)
	go func() { served <- srv.ServeListener(ln) }()
	tr := &http3.Transport{TLSClientConfig: ctls}
	defer tr.Close()
	c := &http.Client{Transport: tr}
	url := "https://" + ln.Addr().String() + "/hash"

	post := func(data []byte) error {
		req, _ := http.NewRequestWithContext(ctxT(t), http.MethodPost, url, bytes.NewReader(data))
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if want := fmt.Sprintf("HTTP/3.0 %d", len(data)); string(b) != want {
			return fmt.Errorf("%s %q, want %q", resp.Status, b, want)
		}
		if got, want := resp.Trailer.Get("X-Sum"), fmt.Sprintf("%x", sha256.Sum256(data)); got != want {
			return fmt.Errorf("trailer X-Sum %q, want %q", got, want)
		}
		return nil
	}
	big := make([]byte, 4<<20)
	rand.Read(big)
	if err := post(big); err != nil {
		t.Fatalf("%s: POST 4 MiB: %v", quicnet.Implementation(), err)
	}
	// More requests at once than the server's stream limit (8): they
	// wait for streams, none fails.
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			if err := post(bytes.Repeat([]byte{byte(i)}, 1000*i)); err != nil {
				t.Errorf("%s: request %d: %v", quicnet.Implementation(), i, err)
			}
		})
	}
	wg.Wait()
	if err := srv.Shutdown(ctxT(t)); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-served; err != http3.ErrServerClosed {
		t.Errorf("ServeListener: %v, want ErrServerClosed", err)
	}
}
