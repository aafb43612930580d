//go:build linux

package kquic

import (
	"context"
	"time"

	"kquic.dev/internal/quicabi"
)

// KernelEventOn reports whether the kernel delivers events of type t on
// c's socket (whatever the application asked for).
func KernelEventOn(c *Conn, t EventType) (bool, error) {
	b, err := c.sock.GetOption(quicabi.QUIC_SOCKOPT_EVENT, quicabi.EventOption{Type: quicabi.EventType(t)}.Marshal())
	if err != nil {
		return false, err
	}
	o, err := quicabi.UnmarshalEventOption(b)
	return o.On, err
}

// DisableCreditSafeRead turns the workaround for the module's stale credit
// updates off for connections made until restore is called.
func DisableCreditSafeRead() (restore func()) {
	noCreditSafeRead = true
	return func() { noCreditSafeRead = false }
}

// SetBufferLimit sets the stream data a connection holds for the
// application before it stops reading from the kernel (maxBuffered, 8 MiB)
// to n, for connections made until restore is called.
func SetBufferLimit(n int) (restore func()) {
	bufferLimit = n
	return func() { bufferLimit = maxBuffered }
}

// WaitHeld waits until c holds more unread stream data than its limit, so
// that its receiver has stopped and the kernel's flow control holds the
// peer back.
func WaitHeld(ctx context.Context, c *Conn) error {
	for {
		c.mu.Lock()
		held := c.buffered > c.maxBuffered
		ch := c.heldSig.wait()
		c.mu.Unlock()
		if held {
			return nil
		}
		select {
		case <-ch:
		case <-c.closed:
			return c.Err()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// AcceptQueued returns how many of the peer's bidirectional and
// unidirectional streams wait for Accept on c, and the bound of each
// queue.
func AcceptQueued(c *Conn) (bidi, uni, maxBidi, maxUni int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.acceptQ[0].items), len(c.acceptQ[1].items), c.acceptMax[0], c.acceptMax[1]
}

// StreamsKept returns how many Stream objects c holds (accepted or not).
func StreamsKept(c *Conn) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.streams)
}

// SetConnCreditRetry sets the fallback retry of writers held back by flow
// control (connCreditRetry) until restore is called.
func SetConnCreditRetry(d time.Duration) (restore func()) {
	old := connCreditRetry.Swap(int64(d))
	return func() { connCreditRetry.Store(old) }
}

// CreditWatched reports whether c watches a second descriptor of its
// socket for EPOLLOUT (writers wait for credit).
func CreditWatched(c *Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.creditWatched()
}

// KernelStreamOpen asks the kernel for the next stream ID of c
// (QUIC_SOCKOPT_STREAM_OPEN with ID -1), without the bindings' handling.
func KernelStreamOpen(c *Conn, uni bool) (int64, error) {
	flags := uint32(quicabi.MSG_QUIC_STREAM_DONTWAIT)
	if uni {
		flags |= quicabi.MSG_QUIC_STREAM_UNI
	}
	b, err := c.sock.GetOption(quicabi.QUIC_SOCKOPT_STREAM_OPEN, quicabi.StreamInfo{StreamID: -1, Flags: flags}.Marshal())
	if err != nil {
		return -1, err
	}
	si, err := quicabi.UnmarshalStreamInfo(b)
	return si.StreamID, err
}
