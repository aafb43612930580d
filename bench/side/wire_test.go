//go:build linux

package side

import (
	"io"
	"sync"
	"testing"
)

// readSizes is a stream that hands out bytes and records how many each
// Read asked for.
type readSizes struct {
	mu    sync.Mutex
	asked []int
	left  int
}

func (r *readSizes) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, len(p))
	if r.left == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.left)
	r.left -= n
	return n, nil
}
func (r *readSizes) Write(p []byte) (int, error) { return len(p), nil }
func (r *readSizes) Close() error                { return nil }

// TestPumpsReadSize: a receiving pump asks for the read size it was given,
// or for the message size or 64 KiB, whichever is larger, by default; and
// counts every byte.
func TestPumpsReadSize(t *testing.T) {
	for _, c := range []struct{ size, read, want int }{
		{4096, 0, 64 << 10},
		{256 << 10, 0, 256 << 10},
		{4096, 4096, 4096},
		{1024, 100, 100},
	} {
		s := &readSizes{left: 1 << 20}
		p := NewPumps(c.size, c.read, -1)
		p.Start(s, false)
		if err := p.Wait("test"); err != nil {
			t.Fatal(err)
		}
		for _, n := range s.asked {
			if n != c.want {
				t.Errorf("size %d, read %d: a read asked for %d bytes, want %d", c.size, c.read, n, c.want)
				break
			}
		}
		if p.Received() != 1<<20 {
			t.Errorf("size %d, read %d: received %d of %d", c.size, c.read, p.Received(), 1<<20)
		}
	}
}
