package kquic

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
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
