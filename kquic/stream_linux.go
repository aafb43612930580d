package kquic

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/quicsock"
)

// Stream is a bidirectional QUIC stream: an io.ReadWriteCloser whose Close
// sends FIN. Read and Write may be called concurrently with each other, not
// each with itself. The two ends of a unidirectional stream are a
// [ReceiveStream] (the peer's, from AcceptUniStream) and a [SendStream]
// (ours, from OpenUniStream).
type Stream struct {
	c  *Conn
	id int64

	// Receive side, guarded by c.mu.
	chunks   [][]byte
	fin      bool
	rerr     error
	readDone bool
	rsig     signal
	readDL   deadline

	// Send side.
	wmu       sync.Mutex // serialises Write, Close and CancelWrite
	msg       *quicsock.Msg
	oob       []byte // the control message of plain writes
	finSent   bool
	werr      error // guarded by c.mu: the peer's STOP_SENDING
	writeDone bool  // guarded by c.mu
	writeDL   deadline
}

func newStream(c *Conn, id int64, canRead, canWrite bool) *Stream {
	return &Stream{c: c, id: id, readDone: !canRead, writeDone: !canWrite}
}

// StreamID returns the stream's ID: its two low bits give its type
// (RFC 9000 §2.1).
func (s *Stream) StreamID() int64 { return s.id }

// Read reads stream data. It returns io.EOF after the peer's FIN, and a
// *StreamError if the peer reset the stream.
func (s *Stream) Read(p []byte) (int, error) {
	c := s.c
	waiting := false // counted in c.recv.want
	for {
		c.mu.Lock()
		if waiting {
			waiting = false
			c.recv.want--
			c.recvChanged()
		}
		if s.readDone && s.rerr == nil && !s.fin {
			c.mu.Unlock()
			return 0, fmt.Errorf("kquic: stream %d cannot be read (it is our unidirectional stream, or reading was cancelled)", s.id)
		}
		if len(s.chunks) > 0 {
			n := s.copyChunks(p)
			c.mu.Unlock()
			return n, nil
		}
		if s.rerr != nil {
			err := s.rerr
			s.readDone = true
			c.forget(s)
			c.mu.Unlock()
			return 0, err
		}
		if s.fin {
			s.readDone = true
			c.forget(s)
			c.mu.Unlock()
			return 0, io.EOF
		}
		if err := c.Err(); err != nil {
			c.mu.Unlock()
			return 0, err
		}
		if len(p) == 0 {
			c.mu.Unlock()
			return 0, nil
		}
		if c.recv.by == nil && !c.held() {
			if n, again, err := s.receiveOwn(p); !again {
				return n, err
			}
			continue
		}
		// Another receiver hands our data over, or stops and lets us in.
		waiting = true
		c.recv.want++
		if c.recv.by == bgReceiver {
			c.interruptReceiver()
		}
		ch, free := s.rsig.wait(), c.recv.free.wait()
		var drained <-chan struct{}
		if c.held() {
			drained = c.drainSig.wait()
		}
		c.mu.Unlock()
		select {
		case <-ch:
		case <-free:
		case <-drained:
		case <-s.readDL.wait():
			c.mu.Lock()
			c.recv.want--
			c.recvChanged()
			c.mu.Unlock()
			return 0, os.ErrDeadlineExceeded
		case <-c.closed:
		}
	}
}

// copyChunks reads the data the stream has received into p, and lets the
// connection's receiving go on once its buffer drained. c.mu is held.
func (s *Stream) copyChunks(p []byte) int {
	c := s.c
	n := 0
	for n < len(p) && len(s.chunks) > 0 {
		m := copy(p[n:], s.chunks[0])
		n += m
		if m == len(s.chunks[0]) {
			s.chunks = s.chunks[1:]
		} else {
			s.chunks[0] = s.chunks[0][m:]
		}
	}
	before := c.buffered
	c.buffered -= n
	if before > c.maxBuffered && c.buffered <= c.maxBuffered {
		c.drainSig.broadcast()
	}
	return n
}

// receiveOwn is Read receiving itself (see recv_linux.go), c.mu held on
// entry and released: the bytes read into p and the read's error, or again
// when Read should look at the stream once more (nothing read, the
// receive was interrupted, or it failed: Err reports it on the next
// round).
func (s *Stream) receiveOwn(p []byte) (n int, again bool, err error) {
	c := s.c
	c.recv.by = s
	c.setReadDeadline(s.readDL.when())
	c.mu.Unlock()
	d, rerr := c.receive(s, p)
	c.mu.Lock()
	n = c.take(s, p, d)
	c.recv.by = nil
	c.recv.lastRead = time.Now()
	c.recvChanged()
	c.mu.Unlock()
	switch {
	case n > 0:
		return n, false, nil
	case rerr == nil:
	case errors.Is(rerr, os.ErrDeadlineExceeded):
		if dl := s.readDL.when(); !dl.IsZero() && !time.Now().Before(dl) {
			return 0, false, os.ErrDeadlineExceeded
		}
		// Interrupted to look again (CancelRead, a new deadline).
	default:
		c.finish(c.endError(rerr))
	}
	return 0, true, nil
}

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

// CancelRead asks the peer to stop sending (STOP_SENDING with the code) and
// discards what arrives: Read then returns a *StreamError with the code
// (Remote false), even if the peer's answering RESET_STREAM comes first. On
// a stream whose reading has ended (io.EOF, a reset, an earlier CancelRead)
// or that the kernel has received whole, it does nothing and returns nil. A
// code above MaxErrorCode is an error matching ErrCodeTooLarge, and nothing
// is sent.
func (s *Stream) CancelRead(code StreamErrorCode) error {
	kcode, err := kernelCode(fmt.Sprintf("stop sending on stream %d", s.id), code)
	if err != nil {
		return err
	}
	c := s.c
	c.mu.Lock()
	if s.readDone || s.fin || s.rerr != nil {
		// Read has ended, or will end with what it has: nothing to stop.
		// (A reset, ours or the peer's, already set rerr.)
		if !s.readDone && s.rerr == nil {
			s.rerr = &StreamError{StreamID: s.id, ErrorCode: code}
			s.discard()
		}
		c.mu.Unlock()
		return nil
	}
	// Recorded before the kernel is asked, so that a Read - and the
	// handling of the RESET_STREAM the peer sends in answer - sees ours.
	s.rerr = &StreamError{StreamID: s.id, ErrorCode: code}
	s.discard()
	c.mu.Unlock()
	err = c.sock.SetOption(quicabi.QUIC_SOCKOPT_STREAM_STOP_SENDING, quicabi.ErrInfo{StreamID: s.id, ErrCode: kcode}.Marshal())
	if err != nil && (errors.Is(err, unix.ENOSTR) || errors.Is(err, unix.EINVAL)) {
		// The kernel has the whole stream, or it was reset meanwhile:
		// nothing left to stop sending.
		err = nil
	}
	if err != nil {
		if e := c.Err(); e != nil {
			return e
		}
		return fmt.Errorf("kquic: stop sending on stream %d: %w", s.id, err)
	}
	return nil
}

// discard drops the stream's buffered data, ends its reading and wakes its
// Read. Call with c.mu held, after setting rerr.
func (s *Stream) discard() {
	c := s.c
	for _, ch := range s.chunks {
		c.buffered -= len(ch)
	}
	s.chunks = nil
	s.readDone = true
	s.rsig.broadcast()
	c.drainSig.broadcast()
	if c.recv.by == s {
		c.interruptReceiver()
	}
	c.forget(s)
}

// SetDeadline sets the read and write deadlines.
func (s *Stream) SetDeadline(t time.Time) error {
	s.SetReadDeadline(t)
	return s.SetWriteDeadline(t)
}

// SetReadDeadline makes a waiting or later Read fail with
// os.ErrDeadlineExceeded once t passes (zero: no deadline).
func (s *Stream) SetReadDeadline(t time.Time) error {
	s.readDL.set(t)
	c := s.c
	c.mu.Lock()
	if c.recv.by == s {
		c.setReadDeadline(t) // the Read receiving waits in the poller
	}
	c.mu.Unlock()
	return nil
}

// SetWriteDeadline does the same for Write.
func (s *Stream) SetWriteDeadline(t time.Time) error {
	s.writeDL.set(t)
	s.c.writers.changed() // a write waiting now honours it
	return nil
}

// ReceiveStream is the receiving end of a unidirectional stream the peer
// opened: an io.Reader. Its methods are those of [Stream].
type ReceiveStream Stream

// StreamID returns the stream's ID (see [Stream.StreamID]).
func (r *ReceiveStream) StreamID() int64 { return r.id }

// Read reads stream data (see [Stream.Read]): io.EOF after the peer's FIN,
// a *StreamError after a reset.
func (r *ReceiveStream) Read(p []byte) (int, error) { return (*Stream)(r).Read(p) }

// CancelRead asks the peer to stop sending (see [Stream.CancelRead]).
func (r *ReceiveStream) CancelRead(code StreamErrorCode) error {
	return (*Stream)(r).CancelRead(code)
}

// SetReadDeadline sets the read deadline (see [Stream.SetReadDeadline]).
func (r *ReceiveStream) SetReadDeadline(t time.Time) error {
	return (*Stream)(r).SetReadDeadline(t)
}

// SendStream is the sending end of a unidirectional stream this side
// opened: an io.WriteCloser whose Close sends FIN. Its methods are those of
// [Stream].
type SendStream Stream

// StreamID returns the stream's ID (see [Stream.StreamID]).
func (w *SendStream) StreamID() int64 { return w.id }

// Write writes stream data (see [Stream.Write]).
func (w *SendStream) Write(p []byte) (int, error) { return (*Stream)(w).Write(p) }

// WriteAndClose writes p with the FIN, in one sendmsg (see
// [Stream.WriteAndClose]).
func (w *SendStream) WriteAndClose(p []byte) (int, error) { return (*Stream)(w).WriteAndClose(p) }

// Close sends FIN (see [Stream.Close]).
func (w *SendStream) Close() error { return (*Stream)(w).Close() }

// CancelWrite abandons sending with RESET_STREAM (see [Stream.CancelWrite]).
func (w *SendStream) CancelWrite(code StreamErrorCode) error {
	return (*Stream)(w).CancelWrite(code)
}

// SetWriteDeadline sets the write deadline (see [Stream.SetWriteDeadline]).
func (w *SendStream) SetWriteDeadline(t time.Time) error {
	return (*Stream)(w).SetWriteDeadline(t)
}

var (
	_ io.ReadWriteCloser = (*Stream)(nil)
	_ io.Reader          = (*ReceiveStream)(nil)
	_ io.WriteCloser     = (*SendStream)(nil)
)
