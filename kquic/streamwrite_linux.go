package kquic

// A stream's sending side: writes held back by the kernel's buffers and
// the peer's flow control, FIN, and the reset of the sending side.

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/quicabi"
)

// Write writes stream data, waiting while the kernel's buffers or the
// peer's flow control hold it back. It returns a *StreamError if the peer
// asked us to stop sending.
func (s *Stream) Write(p []byte) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.finSent {
		return 0, fmt.Errorf("kquic: write on stream %d after Close", s.id)
	}
	return s.send(p, 0)
}

// send writes p with the stream flags; with FIN, p may be empty.
func (s *Stream) send(p []byte, flags uint32) (int, error) {
	c := s.c
	if s.msg == nil {
		s.msg = c.sock.NewMsg()
		s.oob = quicabi.StreamInfoCmsg(s.id, 0)
	}
	oob := s.oob
	if flags != 0 {
		oob = quicabi.StreamInfoCmsg(s.id, flags)
	}
	total := 0
	// watching: this writer is held back by flow control and has the
	// MAX_STREAM_DATA event on (watchCredit); credit is its next signal.
	watching := false
	defer func() {
		if watching {
			c.unwatchCredit()
		}
	}()
	var credit <-chan struct{}
	for len(p) > 0 || flags&quicabi.MSG_QUIC_STREAM_FIN != 0 {
		c.mu.Lock()
		werr := s.werr
		if watching {
			credit = c.flowSig.wait() // before the send: no update is missed
		}
		c.mu.Unlock()
		if werr != nil {
			return total, werr
		}
		if dl := s.writeDL.when(); !dl.IsZero() && !time.Now().Before(dl) {
			return total, os.ErrDeadlineExceeded
		}
		// Try without waiting first: the common case costs one sendmsg
		// and no bookkeeping. Else wait in the poller for buffer space,
		// with this write's deadline known to the socket (writewait.go).
		n, err := s.msg.Send(p, oob, unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EAGAIN) {
			c.writers.add(&s.writeDL)
			n, err = s.msg.Send(p, oob, 0)
			c.writers.remove(&s.writeDL)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue // a waiting write's deadline passed: ours, or another's
		}
		if err == nil {
			if watching && n > 0 {
				c.unwatchCredit()
				watching = false
			}
			c.active()
			total += n
			p = p[n:]
			if len(p) == 0 {
				return total, nil
			}
			continue
		}
		if errors.Is(err, unix.ENOSPC) {
			// Held back by flow control: wait for credit, which
			// watchCredit makes flowSig tell of (MAX_STREAM_DATA
			// events, EPOLLOUT for MAX_DATA); having started
			// watching, retry at once: the credit may have come
			// before.
			if !watching {
				c.watchCredit()
				watching = true
				continue
			}
			s.waitCredit(credit)
			continue // the loop looks at the deadline and the connection
		}
		return total, s.sendError(err)
	}
	return total, nil
}

// waitCredit waits, for a writer held back by flow control that watches
// for credit, until the credit comes, the retry timer fires where the
// connection cannot watch a second descriptor, the write's deadline
// passes or the connection closes.
func (s *Stream) waitCredit(credit <-chan struct{}) {
	c := s.c
	c.mu.Lock()
	watched := c.creditWatched()
	c.mu.Unlock()
	var (
		t     *time.Timer
		retry <-chan time.Time
	)
	if !watched {
		t = time.NewTimer(time.Duration(connCreditRetry.Load()))
		retry = t.C
	}
	select {
	case <-credit:
	case <-retry:
	case <-s.writeDL.wait():
	case <-c.closed:
	}
	if t != nil {
		t.Stop()
	}
}

// sendError is the error of a write whose sendmsg failed with err (not
// for flow control or a deadline): the peer's STOP_SENDING, the
// connection's end, or the sendmsg's error on a sending side that is
// closed or reset.
func (s *Stream) sendError(err error) error {
	c := s.c
	c.mu.Lock()
	werr := s.werr
	c.mu.Unlock()
	if werr != nil {
		return werr
	}
	if e := c.Err(); e != nil {
		return e
	}
	if errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ENOTCONN) || errors.Is(err, os.ErrClosed) {
		if e := c.awaitEnd(); e != nil {
			return e
		}
	}
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSTR) {
		// The sending side is finished; if the peer's STOP_SENDING did it,
		// its event may still be on its way to the reader.
		if werr := s.awaitStopSending(); werr != nil {
			return werr
		}
	}
	return &net.OpError{Op: "write", Net: "quic", Source: c.LocalAddr(), Addr: c.RemoteAddr(),
		Err: fmt.Errorf("stream %d: %w (its sending side is closed or reset)", s.id, os.NewSyscallError("sendmsg", err))}
}

// connCreditRetry is how often a writer held back by flow control tries
// again when the connection could not watch a second descriptor of the
// socket for EPOLLOUT (see Conn.watchCredit), the only sign of connection
// credit (MAX_DATA) the kernel gives: a fallback, not the way credit is
// waited for.
var connCreditRetry = func() (d atomic.Int64) { d.Store(int64(10 * time.Millisecond)); return }()

// stopSendingGrace bounds how long a write that the kernel refused (EINVAL:
// the sending side is reset) waits for the STOP_SENDING that caused it to be
// recorded: the kernel resets the stream when the frame arrives, and tells
// the receiver by an event that may still be queued behind data. The wait
// ends as soon as the event is handled. TestFuncStreamReset needs it: a
// Write right after the peer's STOP_SENDING must fail with the peer's
// *StreamError, not with the kernel's bare EINVAL.
const stopSendingGrace = 250 * time.Millisecond

// awaitStopSending waits up to stopSendingGrace for a STOP_SENDING from the
// peer to be recorded, and returns it.
func (s *Stream) awaitStopSending() error {
	c := s.c
	deadline := time.NewTimer(stopSendingGrace)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		werr := s.werr
		ch := c.stopSig.wait()
		c.mu.Unlock()
		if werr != nil {
			return werr
		}
		select {
		case <-ch:
		case <-deadline.C:
			return nil
		case <-c.closed:
			return c.err
		}
	}
}

// Close sends FIN: the peer reads io.EOF after the data written. Reading
// continues to work on a bidirectional stream.
func (s *Stream) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.finSent {
		return nil
	}
	s.c.mu.Lock()
	done := s.writeDone
	s.c.mu.Unlock()
	if done {
		return nil
	}
	_, err := s.sendFin(nil)
	return err
}

// WriteAndClose writes p and sends FIN with it: one sendmsg, so a p that
// fits a packet goes out as one STREAM frame carrying the FIN. Write then
// Close would send the FIN in a packet of its own when the socket has
// stream_data_nodelay (Config.StreamDataNoDelay), as each write leaves at
// once. After Close it is an error, as Write.
func (s *Stream) WriteAndClose(p []byte) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.finSent {
		return 0, fmt.Errorf("kquic: write on stream %d after Close", s.id)
	}
	return s.sendFin(p)
}

// sendFin sends p with FIN and records the sending side as done; s.wmu is
// held.
func (s *Stream) sendFin(p []byte) (int, error) {
	n, err := s.send(p, quicabi.MSG_QUIC_STREAM_FIN)
	if err != nil {
		return n, err
	}
	s.finSent = true
	s.c.mu.Lock()
	s.writeDone = true
	s.c.forget(s)
	s.c.mu.Unlock()
	return n, nil
}

// CancelWrite abandons sending: the kernel sends RESET_STREAM with the code.
// On a stream whose sending side has already finished (all data and the FIN
// delivered, or reset before) it does nothing and returns nil; on the peer's
// unidirectional stream it is an error. A code above MaxErrorCode (the
// kernel's 32 bits) is an error matching ErrCodeTooLarge, and nothing is sent.
func (s *Stream) CancelWrite(code StreamErrorCode) error {
	kcode, err := kernelCode(fmt.Sprintf("reset stream %d", s.id), code)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	c := s.c
	c.mu.Lock()
	done, werr := s.writeDone, s.werr
	c.mu.Unlock()
	if done && !s.finSent {
		if werr != nil {
			return nil // reset already (by us, or by the kernel for the peer's STOP_SENDING)
		}
		return fmt.Errorf("kquic: reset stream %d: it is the peer's unidirectional stream, which we cannot write", s.id)
	}
	err = c.sock.SetOption(quicabi.QUIC_SOCKOPT_STREAM_RESET, quicabi.ErrInfo{StreamID: s.id, ErrCode: kcode}.Marshal())
	if err != nil {
		if (s.finSent || werr != nil) && (errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSTR)) {
			// The peer has everything we sent, or the kernel already reset
			// the stream for the peer's STOP_SENDING: nothing to abandon.
			return nil
		}
		if e := c.Err(); e != nil {
			return e
		}
		return fmt.Errorf("kquic: reset stream %d: %w", s.id, err)
	}
	s.c.mu.Lock()
	s.writeDone = true
	if s.werr == nil {
		s.werr = &StreamError{StreamID: s.id, ErrorCode: code}
	}
	s.c.forget(s)
	s.c.mu.Unlock()
	return nil
}
