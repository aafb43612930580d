//go:build linux

package ktls

import (
	"crypto/tls"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// sendfileSize is the file TestSendfile sends: more than the socket's send
// and receive buffers can hold together (the maxima of net.ipv4.tcp_wmem
// and tcp_rmem, 4 and 6 MiB by default), so the file cannot be in flight at
// once and sendfile returns on a full socket and resumes from its offset as
// the reader (slower: it hashes) drains it; and a tail of 5,000 bytes that
// ends neither on a page nor on a 16 KiB record. The test moved 64 MiB
// before: a larger file adds more of the same resumes.
func sendfileSize(t testing.TB) int64 {
	limit := func(sysctl string, def int64) int64 {
		b, err := os.ReadFile("/proc/sys/net/ipv4/" + sysctl)
		if err != nil {
			return def
		}
		f := strings.Fields(string(b))
		if len(f) != 3 {
			t.Fatalf("/proc/sys/net/ipv4/%s is %q, want three numbers", sysctl, b)
		}
		v, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatalf("/proc/sys/net/ipv4/%s: %v", sysctl, err)
		}
		return v
	}
	return limit("tcp_wmem", 4<<20) + limit("tcp_rmem", 6<<20) + 5000
}

func TestSendfile(t *testing.T) {
	requireKTLS(t)
	size := sendfileSize(t)
	t.Logf("sending a file of %d bytes", size)
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
