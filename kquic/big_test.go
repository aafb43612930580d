//go:build linux

package kquic_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"kquic.dev/kquic"
)

// prng is a fast deterministic byte source, for data too big for
// crypto/rand under emulation.
type prng struct{ r *rand.ChaCha8 }

func newPRNG(seed byte) io.Reader { return prng{rand.NewChaCha8([32]byte{seed})} }

func (p prng) Read(b []byte) (int, error) { return p.r.Read(b) }

// TestGiBTransfer sends 1 GiB on one stream and compares SHA-256 sums.
func TestGiBTransfer(t *testing.T) {
	if testing.Short() {
		t.Skip("1 GiB transfer")
	}
	const size = 1 << 30
	cli, srv := pair(t, nil, nil)
	type result struct {
		sum [32]byte
		n   int64
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := srv.AcceptStream(ctxT(t))
		if err != nil {
			done <- result{err: err}
			return
		}
		h := sha256.New()
		n, err := io.CopyBuffer(h, s, make([]byte, 256<<10))
		var r result
		copy(r.sum[:], h.Sum(nil))
		r.n, r.err = n, err
		done <- r
	}()
	s, err := cli.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	h := sha256.New()
	if _, err := io.CopyBuffer(io.MultiWriter(s, h), io.LimitReader(newPRNG(1), size), make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(9 * time.Minute):
		t.Fatal("the server did not read 1 GiB within 9 minutes")
	}
	d := time.Since(start)
	if r.err != nil || r.n != size {
		t.Fatalf("server read %d bytes, %v", r.n, r.err)
	}
	if !bytes.Equal(r.sum[:], h.Sum(nil)) {
		t.Fatal("SHA-256 of the received GiB differs")
	}
	t.Logf("1 GiB in %v: %.1f Mbit/s (SHA-256 on both ends included)", d.Round(time.Millisecond), float64(size)*8/d.Seconds()/1e6)
}

// TestManyStreams runs 100 streams at once, each carrying different data
// both ways: the server sends back each stream's bytes reversed in blocks,
// plus its SHA-256, so misrouted or mixed-up data shows.
func TestManyStreams(t *testing.T) {
	const streams, size = 100, 48 << 10
	cli, srv := pair(t, nil, &kquic.Config{Transport: kquic.TransportParameters{MaxStreamsBidi: streams}})
	var swg sync.WaitGroup
	serveErr := make(chan error, streams)
	swg.Add(1)
	go func() {
		defer swg.Done()
		for i := 0; i < streams; i++ {
			s, err := srv.AcceptStream(ctxT(t))
			if err != nil {
				serveErr <- err
				return
			}
			swg.Add(1)
			go func() {
				defer swg.Done()
				b, err := io.ReadAll(s)
				if err != nil {
					serveErr <- fmt.Errorf("server read on stream %d: %w", s.StreamID(), err)
					return
				}
				sum := sha256.Sum256(b)
				rev := make([]byte, len(b))
				for j := range b {
					rev[len(b)-1-j] = b[j]
				}
				if _, err := s.Write(append(sum[:], rev...)); err != nil {
					serveErr <- err
				}
				s.Close()
			}()
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	start := time.Now()
	for i := 0; i < streams; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := cli.OpenStreamSync(ctxT(t))
			if err != nil {
				errs <- err
				return
			}
			data := make([]byte, size+i*97)
			newPRNG(byte(i)).Read(data)
			if _, err := s.Write(data); err != nil {
				errs <- fmt.Errorf("stream %d: write: %w", s.StreamID(), err)
				return
			}
			s.Close()
			got, err := io.ReadAll(s)
			if err != nil {
				errs <- fmt.Errorf("stream %d: read: %w", s.StreamID(), err)
				return
			}
			sum := sha256.Sum256(data)
			if len(got) != 32+len(data) || !bytes.Equal(got[:32], sum[:]) {
				errs <- fmt.Errorf("stream %d: the server saw other data (%d bytes back)", s.StreamID(), len(got))
				return
			}
			for j := range data {
				if got[32+len(data)-1-j] != data[j] {
					errs <- fmt.Errorf("stream %d: reply differs at byte %d", s.StreamID(), j)
					return
				}
			}
		}()
	}
	wg.Wait()
	swg.Wait()
	close(errs)
	close(serveErr)
	for err := range errs {
		t.Error(err)
	}
	for err := range serveErr {
		t.Error(err)
	}
	t.Logf("%d streams, %d KiB each way each, in %v", streams, size>>10, time.Since(start).Round(time.Millisecond))
}
