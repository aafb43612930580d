//go:build linux

package ktls

import (
	"crypto/tls"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// writeTestFile writes n deterministic bytes to a file under dir (in the
// guest, /tmp is a tmpfs, so the file lives in the page cache).
func writeTestFile(t testing.TB, dir string, seed uint64, n int64) (*os.File, string) {
	t.Helper()
	name := filepath.Join(dir, "payload")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, stream(seed, n)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	sum, _, _ := digest(stream(seed, n))
	return f, sum
}

func TestSendfile(t *testing.T) {
	requireKTLS(t)
	const size = 64 << 20
	for _, sc := range []suiteCase{{"TLS13", tls.VersionTLS13, 0}, tls12Suites[0]} {
		for _, kind := range []pairKind{kernelServer, kernelBoth} {
			t.Run(sc.name+"/"+kind.String(), func(t *testing.T) {
				f, want := writeTestFile(t, t.TempDir(), 7, size)
				c, s := dialPair(t, kind, clientConfig(t, sc.version, sc.suites()...), serverConfig(t, sc.version, sc.suites()...))
				ks := s.(*Conn)
				t.Logf("notes: %v", ks.Notes())
				errc := make(chan error, 1)
				go func() {
					n, err := io.Copy(ks, f) // → (*Conn).ReadFrom → sendfile
					if err == nil && n != size {
						err = io.ErrShortWrite
					}
					if err == nil {
						err = ks.CloseWrite()
					}
					errc <- err
				}()
				got, n, err := digest(c)
				if err != nil || n != size || got != want {
					t.Fatalf("received %d bytes, %v; sha256 %s, want %s", n, err, got, want)
				}
				if err := <-errc; err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
