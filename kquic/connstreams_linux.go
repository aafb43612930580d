package kquic

// A connection's streams: the peer's as their data and events come, and
// those the application accepts and opens.

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/quicabi"
)

func streamType(id int64) int { return int(id & quicabi.QUIC_STREAM_TYPE_MASK) }

// isLocal reports whether this side initiated the stream.
func (c *Conn) isLocal(id int64) bool {
	server := id&quicabi.QUIC_STREAM_TYPE_SERVER_MASK != 0
	return server != c.client
}

// peerStream returns the stream for incoming data or events, creating (and
// queueing for Accept) the peer's new streams. It returns nil for streams
// already gone. Call with c.mu held.
func (c *Conn) peerStream(id int64) *Stream {
	if s, ok := c.streams[id]; ok {
		return s
	}
	if c.isLocal(id) {
		return nil
	}
	t := streamType(id)
	if id <= c.maxPeer[t] {
		return nil
	}
	// Opening a stream opens every lower one of its type (RFC 9000 §2.1).
	first := c.maxPeer[t] + 4
	if c.maxPeer[t] < 0 {
		first = int64(t)
	}
	uni := id&quicabi.QUIC_STREAM_TYPE_UNI_MASK != 0
	q := 0
	if uni {
		q = 1
	}
	var s *Stream
	full := c.held()
	for n := first; n <= id; n += 4 {
		s = newStream(c, n, true, !uni)
		c.streams[n] = s
		c.acceptQ[q].push(s)
	}
	c.maxPeer[t] = id
	if !full && c.held() {
		c.heldSig.broadcast()
	}
	return s
}

func (c *Conn) handleData(id int64, data []byte, fin bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.peerStream(id)
	if s == nil || s.rerr != nil {
		return
	}
	if len(data) > 0 {
		s.chunks = append(s.chunks, append([]byte(nil), data...))
		c.addBuffered(len(data))
	}
	if fin {
		s.fin = true
	}
	s.rsig.broadcast()
}

func (c *Conn) handleEvent(b []byte) {
	ev, err := quicabi.DecodeEvent(b)
	if err != nil {
		return
	}
	c.mu.Lock()
	switch e := ev.(type) {
	case quicabi.StreamUpdate:
		c.streamUpdate(e)
	case quicabi.MaxStreams:
		c.limitSig.broadcast()
	case quicabi.StreamMaxData:
		c.flowSig.broadcast()
	case quicabi.ConnectionClose:
		c.peerClose = &e
	case quicabi.NewSessionTicket:
		if c.ticket != nil && bytes.Equal(c.ticket, e.Message) {
			c.mu.Unlock()
			return // newConn found this one already
		}
		if c.client {
			msg := e.Message
			c.mu.Unlock()
			c.sess.HandleTicket(msg)
			c.mu.Lock()
		}
	}
	if c.user[ev.Type()] {
		c.events.push(convertEvent(ev)) // or dropped and counted: see EventsDropped
	}
	c.mu.Unlock()
}

// streamUpdate applies a stream state change. Call with c.mu held.
func (c *Conn) streamUpdate(e quicabi.StreamUpdate) {
	if e.ID == 0 && c.early0.Load() {
		c.limitSig.broadcast() // stream 0 may be released: see early0
	}
	switch e.State {
	case quicabi.QUIC_STREAM_RECV_STATE_RECV:
		c.peerStream(e.ID)
	case quicabi.QUIC_STREAM_RECV_STATE_RESET_RECVD:
		if s := c.peerStream(e.ID); s != nil && s.rerr == nil {
			for _, ch := range s.chunks {
				c.buffered -= len(ch)
			}
			s.chunks = nil
			s.rerr = &StreamError{StreamID: e.ID, ErrorCode: StreamErrorCode(e.ErrCode), Remote: true}
			s.rsig.broadcast()
			c.drainSig.broadcast()
		}
	case quicabi.QUIC_STREAM_SEND_STATE_RESET_SENT:
		// The peer's STOP_SENDING made the kernel reset our sending side.
		if s, ok := c.streams[e.ID]; ok && s.werr == nil {
			s.werr = &StreamError{StreamID: e.ID, ErrorCode: StreamErrorCode(e.ErrCode), Remote: true}
		}
		c.stopSig.broadcast()
	}
}

// forget drops a stream both of whose sides are finished. Call with c.mu held.
func (c *Conn) forget(s *Stream) {
	if s.readDone && s.writeDone {
		delete(c.streams, s.id)
	}
}

// AcceptStream waits for the peer to open a bidirectional stream.
//
// The peer's streams wait for Accept in a queue of each type, bounded by
// the stream limit of that type this side advertises
// (TransportParameters.MaxStreamsBidi, MaxStreamsUni; 100 by default).
// While a queue is full the connection stops reading from the kernel: no
// data is dropped, the kernel keeps the peer's streams and their data (and
// whether it gives the peer more stream credit meanwhile is its own: lxin/quic
// 03a9c7c gives a unidirectional stream's back when its FIN arrives); but
// this connection's Reads, datagrams and events wait too, until Accept
// takes a stream. An application that does not want the peer's streams of a type
// should still accept them (and CancelRead them).
func (c *Conn) AcceptStream(ctx context.Context) (*Stream, error) { return c.accept(ctx, 0) }

// AcceptUniStream waits for the peer to open a unidirectional stream: its
// receiving end, which has no Write. Its queue is bounded as AcceptStream's.
func (c *Conn) AcceptUniStream(ctx context.Context) (*ReceiveStream, error) {
	s, err := c.accept(ctx, 1)
	if err != nil {
		return nil, err
	}
	return (*ReceiveStream)(s), nil
}

func (c *Conn) accept(ctx context.Context, q int) (*Stream, error) {
	// A closed connection hands out no more streams, not even those the
	// peer opened before (as quic-go's): they can carry nothing now.
	select {
	case <-c.closed:
		return nil, c.err
	default:
	}
	s, err := waitPop(ctx, c, &c.acceptQ[q])
	if err == nil {
		c.mu.Lock()
		if !c.held() {
			c.drainSig.broadcast() // a full queue (or more) has room: receive again
		}
		c.mu.Unlock()
	}
	return s, err
}

// OpenStream opens a bidirectional stream, or fails with ErrStreamLimit if
// the peer allows no more now. Nothing is sent until the first Write.
func (c *Conn) OpenStream() (*Stream, error) { return c.open(false) }

// OpenUniStream opens a unidirectional stream (see OpenStream): its
// sending end, which has no Read.
func (c *Conn) OpenUniStream() (*SendStream, error) { return sendStream(c.open(true)) }

// OpenStreamSync opens a bidirectional stream, waiting for the peer to allow
// one if needed.
func (c *Conn) OpenStreamSync(ctx context.Context) (*Stream, error) { return c.openSync(ctx, false) }

// OpenUniStreamSync opens a unidirectional stream, waiting if needed.
func (c *Conn) OpenUniStreamSync(ctx context.Context) (*SendStream, error) {
	return sendStream(c.openSync(ctx, true))
}

func sendStream(s *Stream, err error) (*SendStream, error) {
	if err != nil {
		return nil, err
	}
	return (*SendStream)(s), nil
}

func (c *Conn) openSync(ctx context.Context, uni bool) (*Stream, error) {
	for {
		c.mu.Lock()
		ch := c.limitSig.wait()
		c.mu.Unlock()
		s, err := c.open(uni)
		if !errors.Is(err, ErrStreamLimit) {
			return s, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, c.err
		}
	}
}

// errEarlyStream is open's error while the 0-RTT stream 0 is open in the
// kernel (see Conn.early0). It matches ErrStreamLimit: OpenStreamSync
// waits, and the end of stream 0 (a STREAM_UPDATE event) wakes it.
var errEarlyStream error = earlyStreamError{}

type earlyStreamError struct{}

func (earlyStreamError) Error() string {
	return "kquic: no new bidirectional stream until the 0-RTT stream 0 has ended in the kernel (a module bug: README, known module bugs; use OpenStreamSync to wait)"
}

func (earlyStreamError) Unwrap() error { return ErrStreamLimit }

func (c *Conn) open(uni bool) (*Stream, error) {
	if err := c.Err(); err != nil {
		return nil, err
	}
	flags := uint32(quicabi.MSG_QUIC_STREAM_DONTWAIT)
	if uni {
		flags |= quicabi.MSG_QUIC_STREAM_UNI
	}
	b, err := c.sock.GetOption(quicabi.QUIC_SOCKOPT_STREAM_OPEN, quicabi.StreamInfo{StreamID: -1, Flags: flags}.Marshal())
	if !uni && c.early0.Load() {
		// After 0-RTT on stream 0 the kernel hands out 0 again (see
		// early0): the 0-RTT stream itself while it is open, which
		// fails, and a new stream 0 once it has been released; take
		// the next one.
		if errors.Is(err, unix.EINVAL) {
			return nil, errEarlyStream
		}
		if si, uerr := quicabi.UnmarshalStreamInfo(b); err == nil && uerr == nil && si.StreamID == 0 {
			b, err = c.sock.GetOption(quicabi.QUIC_SOCKOPT_STREAM_OPEN, quicabi.StreamInfo{StreamID: -1, Flags: flags}.Marshal())
		}
		if err == nil {
			c.early0.Store(false)
		}
	}
	if err != nil {
		if errors.Is(err, unix.EAGAIN) {
			return nil, ErrStreamLimit
		}
		if isGone(err) {
			if e := c.awaitEnd(); e != nil {
				return nil, e
			}
		}
		if e := c.Err(); e != nil {
			return nil, e
		}
		return nil, fmt.Errorf("kquic: open stream: %w", err)
	}
	si, err := quicabi.UnmarshalStreamInfo(b)
	if err != nil {
		return nil, fmt.Errorf("kquic: open stream: %w", err)
	}
	s := newStream(c, si.StreamID, !uni, true)
	c.mu.Lock()
	c.streams[s.id] = s
	c.mu.Unlock()
	return s, nil
}
