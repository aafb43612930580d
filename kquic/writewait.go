package kquic

import (
	"sync"
	"time"
)

// How writers wait.
//
// A write that finds the socket's buffer full waits in Go's poller inside
// the system call's retry loop (quicsock.Msg.Send), as a blocking sendmsg
// waits in the kernel: ACKs that free buffer space wake it (EPOLLOUT), and
// since the wait is prepared before each try, no wake-up is lost. (A write
// held back by flow control does not wait there: see Conn.watchCredit.)
//
// The poller has one write deadline per socket, shared by every writer, so
// deadlines are per write: writeWaiters keeps the socket's deadline at the
// earliest deadline of the writes waiting now (none: no deadline). When it
// passes, the poller wakes every waiting write; the one whose deadline
// passed returns os.ErrDeadlineExceeded, the others - whose deadlines are
// later or unset - see that theirs has not passed and wait again, with the
// socket's deadline moved to the next one. A deadline set while a write
// waits moves the socket's deadline the same way. So a deadline on one
// stream never fails a write on another, nor a SendDatagram.
type writeWaiters struct {
	mu      sync.Mutex
	waiting map[*deadline]int // the deadlines of the waiting writes
	armed   time.Time         // the socket's write deadline
	set     func(time.Time) error
}

// add records a write about to wait with deadline d (nil: none).
func (w *writeWaiters) add(d *deadline) {
	if d == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiting == nil {
		w.waiting = map[*deadline]int{}
	}
	w.waiting[d]++
	w.rearm()
}

// remove forgets a write that stopped waiting.
func (w *writeWaiters) remove(d *deadline) {
	if d == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiting[d]--; w.waiting[d] <= 0 {
		delete(w.waiting, d)
	}
	w.rearm()
}

// changed moves the socket's deadline after a writer's deadline changed.
func (w *writeWaiters) changed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rearm()
}

// rearm sets the socket's write deadline to the earliest of the waiting
// writes'. Call with w.mu held.
func (w *writeWaiters) rearm() {
	var first time.Time
	for d := range w.waiting {
		if t := d.when(); !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	if !first.Equal(w.armed) {
		w.armed = first
		w.set(first)
	}
}
