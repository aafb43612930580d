package web

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
)

// The content is blockSize-byte blocks of one pseudo-random pattern, each
// block's first stampLen bytes XORed with its index, so that no two blocks
// of a resource are alike and a block delivered in the wrong place is seen.
const (
	blockSize = 16 << 10
	stampLen  = 8
)

var pattern = func() []byte {
	rng := rand.NewChaCha8([32]byte{'k', 'q', 'u', 'i', 'c', ' ', 'w', 'e', 'b'})
	b := make([]byte, blockSize)
	rng.Read(b)
	return b
}()

// Fill writes the content's bytes at offsets [off, off+len(p)) into p.
func Fill(p []byte, off int64) {
	for len(p) > 0 {
		blk, in := off/blockSize, int(off%blockSize)
		n := copy(p, pattern[in:])
		if in < stampLen {
			var st [stampLen]byte
			binary.BigEndian.PutUint64(st[:], uint64(blk)^binary.BigEndian.Uint64(pattern))
			copy(p[:n], st[in:])
		}
		p, off = p[n:], off+int64(n)
	}
}

// Content returns a reader of the first size bytes of the content.
func Content(size int64) io.Reader { return &contentReader{size: size} }

type contentReader struct{ off, size int64 }

func (r *contentReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	if rem := r.size - r.off; int64(len(p)) > rem {
		p = p[:rem]
	}
	Fill(p, r.off)
	r.off += int64(len(p))
	return len(p), nil
}

// MaxObject is the largest /obj/N; objects are served from one buffer
// filled once.
const MaxObject = 1 << 20

var objects = sync.OnceValue(func() []byte {
	b := make([]byte, MaxObject)
	Fill(b, 0)
	return b
})

// Checker is an io.Writer that compares what is written to it with the
// first Size bytes of the content, failing at the first byte that differs
// or past Size. Done reports a short body.
type Checker struct {
	Size    int64
	off     int64
	scratch []byte
}

// NewChecker returns a Checker of size bytes.
func NewChecker(size int64) *Checker { return &Checker{Size: size} }

// Reset makes the Checker check a new body of size bytes.
func (c *Checker) Reset(size int64) { c.Size, c.off = size, 0 }

// Write checks p.
func (c *Checker) Write(p []byte) (int, error) {
	if c.off+int64(len(p)) > c.Size {
		return 0, fmt.Errorf("body longer than the %d bytes asked for (%d bytes at offset %d)", c.Size, len(p), c.off)
	}
	if c.off+int64(len(p)) <= MaxObject {
		if i := firstDiff(p, objects()[c.off:]); i >= 0 {
			return 0, c.differs(i)
		}
		c.off += int64(len(p))
		return len(p), nil
	}
	if c.scratch == nil {
		c.scratch = make([]byte, 32<<10)
	}
	done := 0
	for done < len(p) {
		n := min(len(p)-done, len(c.scratch))
		Fill(c.scratch[:n], c.off)
		if i := firstDiff(p[done:done+n], c.scratch[:n]); i >= 0 {
			return done, c.differs(i)
		}
		done += n
		c.off += int64(n)
	}
	return done, nil
}

func (c *Checker) differs(i int) error {
	return fmt.Errorf("body differs from the content at offset %d of %d", c.off+int64(i), c.Size)
}

// Done reports whether all Size bytes arrived.
func (c *Checker) Done() error {
	if c.off != c.Size {
		return fmt.Errorf("body ended after %d of %d bytes", c.off, c.Size)
	}
	return nil
}

// firstDiff is the index of the first byte where p differs from want, or
// -1 if p is a prefix of want.
func firstDiff(p, want []byte) int {
	if bytes.Equal(p, want[:len(p)]) {
		return -1
	}
	for i := range p {
		if p[i] != want[i] {
			return i
		}
	}
	return -1
}
