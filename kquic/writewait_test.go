package kquic

import (
	"sync"
	"testing"
	"time"
)

// TestWriteWaitersArmTheEarliestDeadline: the socket's write deadline is
// always the earliest of the waiting writes' own (none: no deadline), and
// follows adds, removes and deadlines changed while a write waits.
func TestWriteWaitersArmTheEarliestDeadline(t *testing.T) {
	var mu sync.Mutex
	var armed []time.Time
	w := writeWaiters{set: func(t time.Time) error {
		mu.Lock()
		armed = append(armed, t)
		mu.Unlock()
		return nil
	}}
	last := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		if len(armed) == 0 {
			return time.Time{}
		}
		return armed[len(armed)-1]
	}
	now := time.Now()
	var a, b, none deadline
	a.set(now.Add(time.Hour))
	b.set(now.Add(time.Minute))
	defer a.set(time.Time{})
	defer b.set(time.Time{})

	w.add(&none)
	if n := len(armed); n != 0 {
		t.Fatalf("a write without a deadline armed the socket's: %v", armed)
	}
	w.add(&a)
	if got := last(); !got.Equal(now.Add(time.Hour)) {
		t.Fatalf("armed %v, want a's deadline", got)
	}
	w.add(&b)
	if got := last(); !got.Equal(now.Add(time.Minute)) {
		t.Fatalf("armed %v, want b's, the earlier", got)
	}
	// b's writer moves its deadline later while it waits.
	b.set(now.Add(2 * time.Hour))
	w.changed()
	if got := last(); !got.Equal(now.Add(time.Hour)) {
		t.Fatalf("armed %v after b moved later, want a's", got)
	}
	w.remove(&a)
	if got := last(); !got.Equal(now.Add(2 * time.Hour)) {
		t.Fatalf("armed %v after a stopped waiting, want b's", got)
	}
	w.remove(&b)
	w.remove(&none)
	if got := last(); !got.IsZero() {
		t.Fatalf("armed %v with no write waiting, want no deadline", got)
	}
	if len(w.waiting) != 0 {
		t.Errorf("waiting = %v after every write left", w.waiting)
	}
}
