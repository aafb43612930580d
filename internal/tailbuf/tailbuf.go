// Package tailbuf keeps the end of what is written to it: a child
// process's output, whose result and errors come last, without holding all
// of a long run in memory.
package tailbuf

import (
	"strings"
	"sync"
)

// DefaultMax is what a Buffer with Max 0 keeps.
const DefaultMax = 8 << 10

// Buffer is an io.Writer that keeps at least the last Max bytes written to
// it (DefaultMax when 0), at most twice that. It is safe for concurrent
// use, so it can take a process's standard output and error at once.
type Buffer struct {
	// Max is how many bytes to keep.
	Max int

	mu sync.Mutex
	b  []byte
}

// Write keeps p; it never fails.
func (t *Buffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	limit := t.Max
	if limit <= 0 {
		limit = DefaultMax
	}
	if len(t.b) > 2*limit {
		t.b = append([]byte(nil), t.b[len(t.b)-limit:]...)
	}
	return len(p), nil
}

// Bytes is a copy of what the buffer kept.
func (t *Buffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.b...)
}

// String is what the buffer kept, without leading and trailing space.
func (t *Buffer) String() string { return strings.TrimSpace(string(t.Bytes())) }

// LastLine is the last line of what the buffer kept (space trimmed).
func (t *Buffer) LastLine() string {
	s := t.String()
	return s[strings.LastIndex(s, "\n")+1:]
}
