//go:build linux

package quicsock

import (
	"errors"
	"net/netip"
	"os"
	"sync"
	"time"
)

// Backend stands in for the kernel under a Socket made by NewFake, so that
// tests of the code above the socket (kquic's read handoff, stream state,
// deadlines) can script the kernel's side and run anywhere, with -race,
// without the module.
//
// Recv and Send wait as the kernel would (for a message, for buffer space)
// until they can go on or wait closes: wait closes when the socket's read
// (for Recv) or write (for Send) deadline passes, or when the socket is
// closed; they then return ErrWaitEnded, which the socket turns into
// os.ErrDeadlineExceeded or os.ErrClosed as the poller would. A call with
// MSG_DONTWAIT gets a closed wait, and should return EAGAIN where it would
// wait.
type Backend interface {
	Recv(p, oob []byte, flags int, wait <-chan struct{}) (n, oobn, rflags int, err error)
	Send(p, oob []byte, flags int, wait <-chan struct{}) (int, error)
	SetOption(opt int, b []byte) error
	GetOption(opt int, buf []byte) ([]byte, error)
}

// NewFake returns a Socket whose system calls go to b.
func NewFake(b Backend, local, remote netip.AddrPort) *Socket {
	f := &fake{b: b, local: local, remote: remote, closed: make(chan struct{})}
	f.rd.init(f.closed)
	f.wd.init(f.closed)
	return &Socket{fake: f}
}

type fake struct {
	b             Backend
	local, remote netip.AddrPort
	rd, wd        fakeDeadline
	closeOnce     sync.Once
	closed        chan struct{}
}

// ErrWaitEnded is what a Backend returns when its wait closed.
var ErrWaitEnded = errors.New("quicsock: the fake socket's wait ended")

// waitErr turns ErrWaitEnded into the poller's error: os.ErrClosed after
// Close, else os.ErrDeadlineExceeded.
func (f *fake) waitErr(err error) error {
	if err != ErrWaitEnded {
		return err
	}
	select {
	case <-f.closed:
		return os.ErrClosed
	default:
		return os.ErrDeadlineExceeded
	}
}

// fakeDeadline is a deadline as the poller keeps one: a channel that closes
// when the deadline passes (or the socket closes). Moving the deadline of a
// channel not yet closed moves its timer, so calls waiting on it see the
// new deadline; once closed, a new deadline makes a new channel.
type fakeDeadline struct {
	mu     sync.Mutex
	ch     chan struct{}
	timer  *time.Timer
	closed <-chan struct{}
}

func (d *fakeDeadline) init(closed <-chan struct{}) {
	d.closed = closed
	d.ch = make(chan struct{})
}

func (d *fakeDeadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	select {
	case <-d.ch:
		d.ch = make(chan struct{}) // passed before: a fresh one
	default:
	}
	if t.IsZero() {
		return
	}
	ch := d.ch
	if dur := time.Until(t); dur > 0 {
		d.timer = time.AfterFunc(dur, func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.ch == ch {
				close(ch)
			}
		})
		return
	}
	close(ch)
}

// wait returns a channel that closes at the deadline or on Close.
func (d *fakeDeadline) wait() <-chan struct{} {
	select {
	case <-d.closed:
		return closedCh
	default:
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ch
}

// expire closes the current channel (Close wakes every waiter).
func (d *fakeDeadline) expire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
	}
	select {
	case <-d.ch:
	default:
		close(d.ch)
	}
}

var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

var errFakeUnsupported = errors.New("quicsock: not supported on a fake socket")
