package quicnet_test

// The cost of the switch: the same bulk transfer on one stream through
// quicnet and directly through the implementation quicnet chooses
// (directBulk, in impl_*_test.go). Run both flavours:
//
//	go test -run XXX -bench Bulk -count 6 ./quicnet/                                   # quic-go
//	go test -run XXX -bench Bulk -count 6 -exec '...kqbench vm --' ./quicnet/            # kernel QUIC, in the guest

import (
	"context"
	"io"
	"testing"
	"time"
)

// bulkSetup connects a client and a server, and returns the client's
// stream and a channel on which the server sends how many bytes it read
// once it reads the stream's end.
type bulkSetup func(b *testing.B) (io.WriteCloser, <-chan int64)

func BenchmarkBulk(b *testing.B) {
	for _, size := range []struct {
		name  string
		chunk int
	}{{"1KiB", 1 << 10}, {"64KiB", 64 << 10}} {
		b.Run(size.name+"/direct", func(b *testing.B) { benchBulk(b, size.chunk, directBulk) })
		b.Run(size.name+"/quicnet", func(b *testing.B) { benchBulk(b, size.chunk, quicnetBulk) })
	}
}

// benchBulk writes b.N chunks and waits for the server to have read them
// all.
func benchBulk(b *testing.B, chunk int, setup bulkSetup) {
	w, done := setup(b)
	buf := make([]byte, chunk)
	b.SetBytes(int64(chunk))
	b.ResetTimer()
	for range b.N {
		if _, err := w.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	select {
	case n := <-done:
		if n != int64(b.N)*int64(chunk) {
			b.Fatalf("the server read %d bytes, want %d", n, int64(b.N)*int64(chunk))
		}
	case <-time.After(5 * time.Minute):
		b.Fatal("the server did not read the stream's end")
	}
	b.StopTimer()
}

func quicnetBulk(b *testing.B) (io.WriteCloser, <-chan int64) {
	cli, srv := newPair(b, nil, nil)
	done := sink(func() (io.Reader, error) { return srv.AcceptStream(context.Background()) })
	s, err := cli.OpenStreamSync(ctxT(b))
	if err != nil {
		b.Fatal(err)
	}
	return s, done
}

// sink reads the first stream that accept returns to its end and reports
// how many bytes it read.
func sink(accept func() (io.Reader, error)) <-chan int64 {
	done := make(chan int64, 1)
	go func() {
		s, err := accept()
		if err != nil {
			done <- -1
			return
		}
		n, _ := io.Copy(io.Discard, s)
		done <- n
	}()
	return done
}

// BenchmarkEmptyWrite measures what the switch adds to a call: a Write of
// nothing, which both implementations return from at once, directly and
// through quicnet.
func BenchmarkEmptyWrite(b *testing.B) {
	b.Run("direct", func(b *testing.B) { benchEmptyWrite(b, directBulk) })
	b.Run("quicnet", func(b *testing.B) { benchEmptyWrite(b, quicnetBulk) })
}

func benchEmptyWrite(b *testing.B, setup bulkSetup) {
	w, _ := setup(b)
	var empty []byte
	for b.Loop() {
		if _, err := w.Write(empty); err != nil {
			b.Fatal(err)
		}
	}
}
