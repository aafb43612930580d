package kquic

// The connection's events and datagrams: turned on and off, sent, and
// received from their bounded queues.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/quicabi"
)

// SetEventEnabled starts (on) or stops delivering events of type t to
// [Conn.ReceiveEvent], as Config.Events does at the start. Events already
// queued stay queued. The connection keeps receiving the events it needs
// internally (stream updates and limits, close) either way.
func (c *Conn) SetEventEnabled(t EventType, on bool) error {
	if t < EventStreamUpdate || t > EventNewSessionTicket {
		return fmt.Errorf("kquic: SetEventEnabled: unknown event type %d", t)
	}
	if err := c.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	internal := false
	for _, e := range internalEvents {
		internal = internal || e == quicabi.EventType(t)
	}
	// Tickets stay on for a client that stores sessions, and credit
	// updates while a writer waits for them.
	if t == EventNewSessionTicket && c.wantTickets || t == EventStreamMaxData && c.creditWaiters > 0 {
		internal = true
	}
	if !internal || on {
		if err := c.sock.SetOption(quicabi.QUIC_SOCKOPT_EVENT, quicabi.EventOption{Type: quicabi.EventType(t), On: on}.Marshal()); err != nil {
			if e := c.Err(); e != nil {
				return e
			}
			return fmt.Errorf("kquic: turn %s events %s: %w", t, map[bool]string{true: "on", false: "off"}[on], err)
		}
	}
	c.user[t] = on
	return nil
}

// SendDatagram sends an unreliable datagram (RFC 9221), waiting while the
// socket's buffer is full. It fails with ErrDatagramsDisabled if the peer
// does not take datagrams, and with a *DatagramTooLargeError if b does not
// fit in one packet.
func (c *Conn) SendDatagram(b []byte) error {
	if len(b) == 0 {
		return errors.New("kquic: send datagram: a datagram cannot be empty")
	}
	for {
		// Waits in the poller for buffer space (writewait.go).
		_, err := c.sock.SendMsg(b, nil, quicabi.MSG_QUIC_DATAGRAM)
		switch {
		case err == nil:
			c.active()
			return nil
		case errors.Is(err, os.ErrDeadlineExceeded):
			continue // a stream write's deadline woke every writer
		case errors.Is(err, unix.EMSGSIZE):
			return &DatagramTooLargeError{Size: len(b), Max: c.maxDatagram()}
		case errors.Is(err, unix.EINVAL):
			return ErrDatagramsDisabled
		}
		if e := c.Err(); e != nil {
			return e
		}
		if isGone(err) {
			if e := c.awaitEnd(); e != nil {
				return e
			}
		}
		return &net.OpError{Op: "write", Net: "quic", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: fmt.Errorf("datagram: %w", os.NewSyscallError("sendmsg", err))}
	}
}

// maxDatagram is the peer's max_datagram_frame_size less the frame header.
func (c *Conn) maxDatagram() int {
	p, err := getTransport(c.sock, true)
	if err != nil || p.MaxDatagramFrameSize == 0 {
		return 0
	}
	// The kernel applies the peer's limit to the whole packet: take off
	// the largest short header (1 + 20-byte connection ID + 4-byte packet
	// number), the AEAD tag (16) and the frame's type and length (3).
	return max(int(p.MaxDatagramFrameSize)-44, 0)
}

// DatagramsDropped returns how many received datagrams were dropped because
// Config.DatagramQueue of them were waiting for ReceiveDatagram.
func (c *Conn) DatagramsDropped() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dgrams.dropped
}

// EventsDropped returns how many events of the types the application asked
// for were dropped because Config.EventQueue of them were waiting for
// ReceiveEvent. The connection's own handling of them (streams, limits, the
// peer's close, session tickets) happens all the same.
func (c *Conn) EventsDropped() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.events.dropped
}

// ReceiveDatagram waits for a datagram from the peer.
func (c *Conn) ReceiveDatagram(ctx context.Context) ([]byte, error) {
	return waitPop(ctx, c, &c.dgrams)
}

// ReceiveEvent waits for the next event of a type listed in Config.Events.
func (c *Conn) ReceiveEvent(ctx context.Context) (Event, error) {
	return waitPop(ctx, c, &c.events)
}

// waitPop takes the first item of q (guarded by c.mu), waiting while it is
// empty, until ctx ends or the connection does.
func waitPop[T any](ctx context.Context, c *Conn, q *queue[T]) (T, error) {
	for {
		c.mu.Lock()
		if v, ok := q.pop(); ok {
			c.mu.Unlock()
			return v, nil
		}
		ch := q.sig.wait()
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		case <-c.closed:
			var zero T
			return zero, c.err
		}
	}
}
