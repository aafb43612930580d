package kquic

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/quicsock"
)

// How a connection receives.
//
// A kernel QUIC socket delivers everything on one descriptor: stream data
// (one stream per recvmsg, named in a control message), datagrams and
// events. One goroutine at a time receives - the receiver - and hands out
// what is not its own.
//
// A Read whose stream has nothing buffered becomes the receiver itself, and
// the kernel copies the stream's data straight into the caller's buffer: no
// goroutine switch and no copy in userspace, as with a blocking recvmsg in C.
// While no Read waits, the connection's own goroutine receives, so that
// events, datagrams, new streams and the peer's close are seen while the
// application reads nothing. It takes over only once no Read has received
// for recvLinger: told when Reads stop receiving, it then waits that long
// before it looks again, so that an application reading in a loop does not
// trade the receiver back and forth with it (each trade is two goroutine
// switches and a contended lock), and a connection whose Read waits for data
// costs nothing. A Read that finds it receiving interrupts it with a past
// read deadline on the descriptor.

// recvLinger is how long the connection's goroutine leaves receiving to the
// application's Reads after the last one.
const recvLinger = 5 * time.Millisecond

// recvBufSize is the size of the connection's own receive buffer, used by
// its goroutine and by Reads with smaller buffers than minDirect.
const recvBufSize = 64 << 10

// minDirect is the smallest Read buffer the kernel writes into directly.
const minDirect = 1024

// creditSafeRead is the most one recvmsg takes: a quarter of the smallest
// of our receive windows. The module (seen on lxin/quic 03a9c7cdb2d5) builds the
// MAX_DATA or MAX_STREAM_DATA frame of a window update before it raises the
// limit, so each update carries the limit of the one before. If one recvmsg
// takes all the credit the peer had (a window's worth, with a large
// buffer), the only update it triggers carries the old limit, no data is
// left to trigger another, and both ends wait for each other until the idle
// timeout. Reading at most a quarter of a window makes several updates per
// window, each after the first carrying a limit above the one the peer has:
// the transfer goes on (TestFuncConnectionCredit, TestModuleBugStaleCredit). With the
// default windows (1-2 MiB) it is larger than any read buffer, so it costs
// nothing there.
func creditSafeRead(local quicabi.TransportParam) int {
	w := uint64(0)
	for _, v := range []uint64{local.MaxData, local.MaxStreamDataBidiLocal, local.MaxStreamDataBidiRemote, local.MaxStreamDataUni} {
		if v > 0 && (w == 0 || v < w) {
			w = v
		}
	}
	return int(w / 4)
}

// creditSafePayload is the max_udp_payload_size to advertise when the
// application left it unset: the kernel frees received stream data, and so
// sends window updates, a whole STREAM frame at a time, and a peer's frames
// are as large as its packets - up to 64 KiB on loopback. With a receive
// window under two such packets, one frame could take all the credit and
// creditSafeRead could not split it; so with small windows the peer is asked
// for packets of at most a quarter of the smallest window (at least 1200 bytes,
// QUIC's minimum). Zero (the kernel's default of 65527) otherwise.
func creditSafePayload(local quicabi.TransportParam) uint16 {
	w := creditSafeRead(local)
	if w == 0 || w >= 65527 || noCreditSafeRead {
		return 0
	}
	return uint16(max(w, 1200))
}

// noCreditSafeRead turns creditSafeRead off, for the test that shows the
// module's bug.
var noCreditSafeRead = false

// bgReceiver stands for the connection's goroutine in recvState.by.
var bgReceiver = new(Stream)

// recvState is the receive side of a Conn. Fields marked "mu" are guarded by
// Conn.mu; the others belong to the receiver of the moment.
type recvState struct {
	by       *Stream   // mu: the receiver (a reading stream, bgReceiver) or nil
	want     int       // mu: Reads waiting for data that are not the receiver
	free     signal    // mu: the receiver stopped and a Read waits: take over
	bgArmed  bool      // mu: the connection's goroutine waits on bgSig
	bgSig    signal    // mu: the receiver stopped and no Read waits
	lastRead time.Time // mu: when a Read last stopped receiving
	fdDL     time.Time // mu: the read deadline set on the descriptor

	msg     *quicsock.Msg
	max     int    // the most one recvmsg takes (creditSafeRead), 0: no limit
	buf     []byte // the connection's buffer
	oob     []byte // control messages
	partial []byte // an event or datagram read in pieces
}

// recvChanged wakes, once the receiver has stopped, the Reads waiting to
// receive, or else the connection's goroutine if it asked to be told.
// Call with c.mu held.
func (c *Conn) recvChanged() {
	r := &c.recv
	switch {
	case r.by != nil:
	case r.want > 0:
		r.free.broadcast()
	case r.bgArmed:
		r.bgArmed = false
		r.bgSig.broadcast()
	}
}

// setReadDeadline sets the descriptor's read deadline, which bounds the
// receiver's wait. Call with c.mu held.
func (c *Conn) setReadDeadline(t time.Time) {
	if t.Equal(c.recv.fdDL) {
		return
	}
	c.recv.fdDL = t
	c.sock.SetReadDeadline(t)
}

// interruptReceiver makes the receiver's wait in the poller end now; it
// then looks again at why it receives. Call with c.mu held.
func (c *Conn) interruptReceiver() {
	if c.recv.by != nil {
		c.setReadDeadline(time.Unix(1, 0))
	}
}

// readLoop is the connection's goroutine: it receives whenever no Read does.
func (c *Conn) readLoop() {
	defer close(c.readerOut)
	r := &c.recv
	timer := time.NewTimer(recvLinger)
	defer timer.Stop()
	for {
		c.mu.Lock()
		for {
			if c.Err() != nil {
				c.mu.Unlock()
				return
			}
			var (
				sig   <-chan struct{}
				tick  <-chan time.Time
				armed bool
			)
			switch {
			case r.by != nil || r.want > 0:
				// A Read receives, or is about to: be told when it
				// stops (an idle connection with a Read waiting costs
				// nothing)...
				r.bgArmed, armed = true, true
				sig = r.bgSig.wait()
			case c.held():
				// The application has not read what is buffered, or
				// not accepted the peer's streams: stop receiving, and
				// the kernel's flow control and stream limits hold the
				// peer.
				sig = c.drainSig.wait()
			default:
				if wait := recvLinger - time.Since(r.lastRead); wait > 0 {
					timer.Reset(wait)
					tick = timer.C
				}
			}
			if sig == nil && tick == nil {
				break
			}
			c.mu.Unlock()
			select {
			case <-sig:
				if armed {
					// ...and once told, look again only after
					// recvLinger, rather than at every turn of a Read
					// loop; and not at once: the Read that told us
					// holds the lock, or is about to take it again
					// (under emulation a contended lock spins for
					// hundreds of microseconds).
					timer.Reset(recvLinger)
					select {
					case <-timer.C:
					case <-c.closed:
					}
				}
			case <-tick:
			case <-c.closed:
			}
			c.mu.Lock()
		}
		r.by = bgReceiver
		c.setReadDeadline(time.Time{})
		c.mu.Unlock()

		_, err := c.receive(nil, nil)

		c.mu.Lock()
		r.by = nil
		c.recvChanged()
		c.mu.Unlock()
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			c.finish(c.endError(err))
			return
		}
	}
}

// receive takes one message from the kernel, waiting in the poller up to the
// descriptor's read deadline, and hands it out. Call it as the receiver,
// without c.mu. Data of stream s (if not nil) is returned for the caller to
// take under c.mu (take): it went to p directly when p is large enough;
// everything else is queued where it belongs, and receive returns a zero
// ownData.
func (c *Conn) receive(s *Stream, p []byte) (ownData, error) {
	r := &c.recv
	buf, direct := r.buf, s != nil && len(p) >= minDirect
	if direct {
		buf = p
	}
	if r.max > 0 && len(buf) > r.max {
		buf = buf[:r.max]
	}
	n, oobn, flags, err := r.msg.Recv(buf, r.oob, 0)
	if err != nil {
		return ownData{}, err
	}
	if flags&quicabi.MSG_QUIC_NOTIFICATION == 0 {
		c.active() // data from the peer (the close event is not)
	}
	if flags&(quicabi.MSG_QUIC_NOTIFICATION|quicabi.MSG_QUIC_DATAGRAM) != 0 {
		r.partial = append(r.partial, buf[:n]...)
		if flags&unix.MSG_EOR == 0 {
			return ownData{}, nil
		}
		item := r.partial
		r.partial = nil
		if flags&quicabi.MSG_QUIC_NOTIFICATION != 0 {
			c.handleEvent(item)
			return ownData{}, nil
		}
		c.mu.Lock()
		c.dgrams.push(item) // or dropped and counted: see DatagramsDropped
		c.mu.Unlock()
		return ownData{}, nil
	}
	cm, err := quicabi.ParseCmsg(r.oob[:oobn])
	if err != nil || !cm.HasStreamInfo {
		return ownData{}, nil // not stream data: nothing else is expected now
	}
	id, fin := cm.Stream.StreamID, cm.Stream.Flags&quicabi.MSG_QUIC_STREAM_FIN != 0
	if s == nil || id != s.id {
		c.handleData(id, buf[:n], fin)
		return ownData{}, nil
	}
	return ownData{data: buf[:n], direct: direct, fin: fin, ok: true}, nil
}

// ownData is what receive got for the stream that called it.
type ownData struct {
	data        []byte // in the caller's buffer (direct) or the connection's
	direct, fin bool
	ok          bool // anything (data or FIN) for the caller's stream
}

// take hands d to s's Read of p: the length read into p. Call with c.mu
// held.
func (c *Conn) take(s *Stream, p []byte, d ownData) int {
	if !d.ok || s.rerr != nil {
		return 0 // reset meanwhile: what arrives is dropped
	}
	if d.fin {
		s.fin = true
	}
	if d.direct {
		return len(d.data)
	}
	m := copy(p, d.data)
	if m < len(d.data) {
		s.chunks = append(s.chunks, append([]byte(nil), d.data[m:]...))
		c.addBuffered(len(d.data) - m)
	}
	return m
}
