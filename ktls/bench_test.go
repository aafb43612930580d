//go:build linux

package ktls

import (
	"crypto/tls"
	"io"
	"net"
	"testing"
)

// Benchmarks of kernel TLS against userspace crypto/tls on loopback, TLS 1.3
// with the suite crypto/tls picks (AES-128-GCM on CPUs with AES). The other
// end is always userspace crypto/tls, so only the measured side changes.
//
//	go test -exec "kqbench vm --load tls --" -run '^$' -bench . ./ktls/

const benchChunk = 16 << 10

// benchPair returns the measured side (kTLS or crypto/tls, by kernel) and a
// crypto/tls peer.
func benchPair(b *testing.B, kernel, measuredIsServer bool) (measured, peer net.Conn) {
	if kernel {
		requireKTLS(b)
	}
	kind := kernelServer
	if !measuredIsServer {
		kind = kernelClient
	}
	if !kernel {
		kind = userspaceBoth
	}
	cc, sc := clientConfig(b, tls.VersionTLS13), serverConfig(b, tls.VersionTLS13)
	c, s := dialPair(b, kind, cc, sc)
	if measuredIsServer {
		return s, c
	}
	return c, s
}

func drain(c net.Conn, n int64) chan error {
	ch := make(chan error, 1)
	go func() {
		m, err := io.Copy(io.Discard, io.LimitReader(c, n))
		if err == nil && m != n {
			err = io.ErrUnexpectedEOF
		}
		ch <- err
	}()
	return ch
}

func BenchmarkSend(b *testing.B) {
	for _, mode := range []struct {
		name   string
		kernel bool
	}{{"ktls", true}, {"crypto-tls", false}} {
		b.Run(mode.name+"/write16k", func(b *testing.B) {
			m, p := benchPair(b, mode.kernel, true)
			buf := make([]byte, benchChunk)
			done := drain(p, int64(b.N)*benchChunk)
			b.SetBytes(benchChunk)
			b.ResetTimer()
			for range b.N {
				if _, err := m.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
		b.Run(mode.name+"/sendfile", func(b *testing.B) {
			const size = 8 << 20
			f, _ := writeTestFile(b, b.TempDir(), 3, size)
			m, p := benchPair(b, mode.kernel, true)
			done := drain(p, int64(b.N)*size)
			b.SetBytes(size)
			b.ResetTimer()
			for range b.N {
				if _, err := f.Seek(0, io.SeekStart); err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(m, f); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}

func BenchmarkReceive(b *testing.B) {
	for _, mode := range []struct {
		name   string
		kernel bool
	}{{"ktls", true}, {"crypto-tls", false}} {
		b.Run(mode.name+"/read16k", func(b *testing.B) {
			m, p := benchPair(b, mode.kernel, false)
			buf := make([]byte, benchChunk)
			go func() {
				out := make([]byte, benchChunk)
				for range b.N {
					if _, err := p.Write(out); err != nil {
						return
					}
				}
			}()
			b.SetBytes(benchChunk)
			b.ResetTimer()
			for range b.N {
				if _, err := io.ReadFull(m, buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
