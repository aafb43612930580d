package kquic

import (
	"sync"
	"time"
)

// signal wakes every goroutine waiting on it. Use it under the owner's lock:
// take wait() before unlocking, then select on the channel.
type signal struct{ ch chan struct{} }

func (s *signal) wait() <-chan struct{} {
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) broadcast() {
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// deadline is a settable deadline whose channel closes when it passes (as in
// net.Pipe).
type deadline struct {
	mu     sync.Mutex
	at     time.Time
	timer  *time.Timer
	cancel chan struct{}
}

// when returns the deadline (zero: none).
func (d *deadline) when() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.at
}

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.at = t
	if d.timer != nil && !d.timer.Stop() {
		<-d.cancel // the timer fired: wait for it to close the channel
	}
	d.timer = nil
	closed := d.cancel != nil && isClosed(d.cancel)
	if t.IsZero() {
		if closed || d.cancel == nil {
			d.cancel = make(chan struct{})
		}
		return
	}
	if dur := time.Until(t); dur > 0 {
		if closed || d.cancel == nil {
			d.cancel = make(chan struct{})
		}
		cancel := d.cancel
		d.timer = time.AfterFunc(dur, func() { close(cancel) })
		return
	}
	if d.cancel == nil {
		d.cancel = make(chan struct{})
	}
	if !closed {
		close(d.cancel)
	}
}

// active reports whether a deadline is set (passed or not).
func (d *deadline) active() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.timer != nil || d.cancel != nil && isClosed(d.cancel)
}

func (d *deadline) wait() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cancel == nil {
		d.cancel = make(chan struct{})
	}
	return d.cancel
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
