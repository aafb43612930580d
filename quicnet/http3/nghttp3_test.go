package http3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"kquic.dev/internal/testcerts"
	"kquic.dev/kquic"
	"kquic.dev/quicnet/http3"
)

// NGHTTP3TestEnv names the variable that points the tests at the QUIC
// module's tests/http3_test (nghttp3 over libquic, on kernel QUIC), or a
// script that runs it.
const NGHTTP3TestEnv = "KQUIC_HTTP3_TEST"

func nghttp3Test(t *testing.T) string {
	t.Helper()
	requireKernel(t) // the module's client is on kernel QUIC
	requireImpl(t)
	p := os.Getenv(NGHTTP3TestEnv)
	if p == "" {
		t.Skipf("set $%s to the QUIC module's tests/http3_test (built with nghttp3) to run it against this package", NGHTTP3TestEnv)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("$%s: %v", NGHTTP3TestEnv, err)
	}
	return p
}

// TestNGHTTP3Client: the module's nghttp3 client fetches from this server
// on kernel QUIC, every case whatever the others did. Bodies above the
// server's buffer (16 KiB) and its single-write limit (64 KiB), and exact
// multiples of the handler's 32 KiB writes, check that the FIN goes with
// the last content: http3_test's read loop drops a FIN that arrives alone
// (quic_recvmsg returns 0 bytes with the FIN flag, which it takes for
// "nothing to read") and then waits for the end of the stream until the
// idle timeout.
func TestNGHTTP3Client(t *testing.T) {
	bin := nghttp3Test(t)
	base := startServer(t, &http3.Server{Handler: testHandler(make(chan error, 1))}, nil)
	for _, tc := range []struct {
		path string
		want string // "" for /big's pattern
		size int64
	}{
		{path: "/hello?name=nghttp3", want: "hello nghttp3"},
		{path: "/big?n=20000", size: 20000},
		{path: "/big?n=65536", size: 65536},
		{path: "/big?n=300000", size: 300000},
		{path: "/big?n=1048576", size: 1048576},
	} {
		t.Run(strings.TrimPrefix(tc.path, "/"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var out, errb bytes.Buffer
			cmd := exec.CommandContext(ctx, bin, "-c", base+tc.path)
			cmd.Stdout, cmd.Stderr = &out, &errb
			start := time.Now()
			runErr := cmd.Run()
			// It prints the body byte by byte with "%c" through a C
			// string, so NUL bytes vanish, then a newline at the end.
			want := []byte(tc.want)
			if tc.want == "" {
				var body bytes.Buffer
				writePattern(&body, tc.size)
				want = bytes.ReplaceAll(body.Bytes(), []byte{0}, nil)
			}
			gotBody := bytes.Contains(out.Bytes(), want)
			switch {
			case runErr != nil && gotBody:
				t.Errorf("http3_test -c %s printed the whole body, then failed (%v) after %v: it did not see the stream's FIN, which this server must send with the last content\n%s", tc.path, runErr, time.Since(start).Round(time.Second), errb.String())
			case runErr != nil:
				t.Errorf("http3_test -c %s: %v\n%.2000s%s", base+tc.path, runErr, out.String(), errb.String())
			case !gotBody:
				t.Errorf("http3_test -c %s printed %d bytes (%.60q...), not the body (%d bytes without NULs)", tc.path, out.Len(), out.String(), len(want))
			}
		})
	}
}

// TestNGHTTP3Server: this client fetches from the module's nghttp3 server.
func TestNGHTTP3Server(t *testing.T) {
	bin := nghttp3Test(t)
	// A free UDP port for the server (nothing else binds it here).
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "-s", addr, testcerts.Path("server-key.pem"), testcerts.Path("server.pem"))
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Dir = t.TempDir()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	up, gone := context.WithCancelCause(ctx) // until it listens, or exits
	go func() {
		err := cmd.Wait()
		gone(fmt.Errorf("the server exited before it listened: %v", err))
		close(exited)
	}()
	// output ends the server and returns what it wrote (read only once it
	// exited: it writes out until then).
	output := func() string {
		cancel()
		<-exited
		return out.String()
	}
	defer output()
	// The dial waits until the server listens. A first flight sent before
	// that is lost, and a kernel client does not recover from losing one of
	// two Initial packets against a kernel server (kmod/knownbugs
	// PTOFirstInitial, TestModuleBugPTOFirstInitial).
	up, stop := context.WithTimeoutCause(up, 30*time.Second, errors.New("the server did not listen within 30 s"))
	defer stop()
	if err := kquic.WaitListening(up, netip.MustParseAddrPort(addr)); err != nil {
		t.Fatalf("%v (server output: %s)", err, output())
	}
	c := client(t, nil)
	resp, b, err := fetch(ctxT(t), c, "https://"+addr+"/")
	if err != nil {
		t.Fatalf("%v (server output: %s)", err, output())
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "Hello, HTTP/3!") {
		t.Errorf("nghttp3 server: %s %q", resp.Status, b)
	}
}
