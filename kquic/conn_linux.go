package kquic

import (
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/handshake"
	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/quicsock"
)

// maxBuffered bounds the stream data a connection holds in userspace for
// streams the application has not read yet; past it the connection stops
// reading from the kernel, and the kernel's flow control holds the peer back.
const maxBuffered = 8 << 20

// bufferLimit is maxBuffered for the connections made from now on; tests
// lower it (SetBufferLimit) to hold a peer back without megabytes of data.
var bufferLimit = maxBuffered

// Conn is an established QUIC connection: a kernel QUIC socket whose
// handshake has completed. Its methods are safe for concurrent use.
type Conn struct {
	sock   *quicsock.Socket
	sess   *handshake.Session
	client bool
	local  netip.AddrPort
	remote netip.AddrPort
	user   [quicabi.QUIC_EVENT_MAX]bool // events the application asked for (guarded by mu)

	wantTickets bool   // a client that stores session tickets
	ticket      []byte // the session ticket already handled (the kernel reports only the first)

	// early0 says stream 0 was opened for 0-RTT data (DialEarly) and no
	// bidirectional stream has been opened since. The module sets its next
	// bidirectional ID back to 0 when the server's transport parameters
	// arrive (README, known module bugs): while stream 0 is open in the
	// kernel, opening a stream fails with EINVAL (open waits for its end);
	// once it is released, the kernel opens another stream 0, which open
	// leaves unused.
	early0 atomic.Bool

	mu      sync.Mutex
	streams map[int64]*Stream
	maxPeer [4]int64 // highest peer stream ID seen, per type (-1: none)
	// acceptQ holds the peer's new streams, bidirectional and
	// unidirectional, until Accept takes them. The stream limits we
	// advertise bound the peer's streams open in the kernel, not these:
	// the kernel frees a peer's unidirectional stream, and gives the peer
	// its credit back, once its FIN has arrived, accepted or not. So
	// acceptMax bounds each queue in turn (see acceptFull): at the stream
	// limit of its type, the connection stops reading from the kernel, and
	// what follows waits there until Accept takes one.
	acceptQ   [2]queue[*Stream]
	acceptMax [2]int
	dgrams    queue[[]byte] // received datagrams (Config.DatagramQueue)
	events    queue[Event]  // events for ReceiveEvent (Config.EventQueue)
	buffered  int
	// maxBuffered is this connection's bound on buffered (bufferLimit
	// when it was made).
	maxBuffered int
	drainSig    signal // buffered fell to maxBuffered, or Accept took a stream: the receiver may go on (held)
	heldSig     signal // buffered passed maxBuffered, or an accept queue filled: the receiver stops (held)
	limitSig    signal // MAX_STREAMS arrived: openers retry
	stopSig     signal // a STOP_SENDING reset a sending side (awaitStopSending)
	flowSig     signal // credit may have come (MAX_STREAM_DATA, EPOLLOUT): writers held back by flow control retry
	// creditWaiters counts the writers held back by flow control; while
	// it is not 0 the MAX_STREAM_DATA event is on and creditFile, a
	// second descriptor of the socket, is watched for EPOLLOUT
	// (watchCredit; guarded by mu).
	creditWaiters int
	creditFile    *os.File
	peerClose     *quicabi.ConnectionClose

	writers writeWaiters // the deadlines of writes waiting (writewait.go)

	// idle is the connection's idle timeout, or 0 where keep-alives make
	// one unlikely; lastActive (unix ns) is when the application last sent
	// or received something. Together they tell an idle timeout from the
	// peer's close with code 0, which the kernel reports alike.
	idle       time.Duration
	lastActive atomic.Int64

	recv recvState // who receives from the socket (recv_linux.go)

	closed    chan struct{}
	err       error // why the connection ended; set before closed is closed
	closeOnce sync.Once
	readerOut chan struct{}
}

// defaultAcceptMax bounds the accept queues when the kernel does not say
// which stream limits it advertises: its default of 100.
const defaultAcceptMax = 100

// acceptFull reports whether a queue of the peer's streams not yet accepted
// has reached its bound. Call with c.mu held.
func (c *Conn) acceptFull() bool {
	return len(c.acceptQ[0].items) >= c.acceptMax[0] || len(c.acceptQ[1].items) >= c.acceptMax[1]
}

// held reports whether the connection has stopped reading from the kernel
// until the application reads buffered data (maxBuffered) or accepts
// streams (acceptMax). Call with c.mu held.
func (c *Conn) held() bool { return c.buffered > c.maxBuffered || c.acceptFull() }

// addBuffered counts n more bytes buffered for the application. Call with
// c.mu held.
func (c *Conn) addBuffered(n int) {
	before := c.buffered
	c.buffered += n
	if before <= c.maxBuffered && c.buffered > c.maxBuffered {
		c.heldSig.broadcast()
	}
}

// internalEvents are enabled on every connection: the bindings need them.
// QUIC_EVENT_STREAM_MAX_DATA is on only while a writer waits for credit
// (watchCredit): it comes with every MAX_STREAM_DATA the peer sends,
// hundreds per 32 MiB, each a wake-up of the connection's receiver.
var internalEvents = []quicabi.EventType{
	quicabi.QUIC_EVENT_STREAM_UPDATE,
	quicabi.QUIC_EVENT_STREAM_MAX_STREAM,
	quicabi.QUIC_EVENT_CONNECTION_CLOSE,
}

// newConn wraps a socket whose handshake completed; pre lists the streams
// opened before it (0-RTT), which exist before the reader starts.
func newConn(sock *quicsock.Socket, sess *handshake.Session, cfg *Config, client bool, pre ...int64) (*Conn, error) {
	c := &Conn{
		sock: sock, sess: sess, client: client,
		streams:     map[int64]*Stream{},
		maxPeer:     [4]int64{-1, -1, -1, -1},
		maxBuffered: bufferLimit,
		closed:      make(chan struct{}),
		readerOut:   make(chan struct{}),
	}
	c.writers.set = sock.SetWriteDeadline
	c.dgrams = newQueue[[]byte](orDefault(cfg.DatagramQueue, DefaultDatagramQueue))
	c.events = newQueue[Event](orDefault(cfg.EventQueue, DefaultEventQueue))
	for i := range c.acceptQ {
		c.acceptQ[i] = newQueue[*Stream](math.MaxInt)
	}
	c.recv.msg = sock.NewMsg()
	c.recv.buf = make([]byte, recvBufSize)
	c.acceptMax = [2]int{defaultAcceptMax, defaultAcceptMax}
	if local, err := getTransport(sock, false); err == nil {
		if !noCreditSafeRead {
			c.recv.max = creditSafeRead(local)
		}
		c.acceptMax = [2]int{orDefault(int(local.MaxStreamsBidi), defaultAcceptMax), orDefault(int(local.MaxStreamsUni), defaultAcceptMax)}
	}
	c.recv.oob = make([]byte, quicabi.RecvCmsgSpace)
	c.local, _ = sock.LocalAddr()
	c.remote, _ = sock.RemoteAddr()
	for _, e := range cfg.Events {
		c.user[e] = true
	}
	on := map[quicabi.EventType]bool{}
	for _, e := range internalEvents {
		on[e] = true
	}
	for _, e := range cfg.Events {
		on[quicabi.EventType(e)] = true
	}
	wantTickets := client && cfg.TLS.ClientSessionCache != nil
	c.wantTickets = wantTickets
	if wantTickets {
		on[quicabi.QUIC_EVENT_NEW_SESSION_TICKET] = true
	}
	for e := range on {
		if err := sock.SetOption(quicabi.QUIC_SOCKOPT_EVENT, quicabi.EventOption{Type: e, On: true}.Marshal()); err != nil {
			return nil, fmt.Errorf("kquic: enable %s events: %w", e, err)
		}
	}
	if wantTickets || (client && c.user[EventNewSessionTicket]) {
		// A ticket that arrived before the event was enabled waits here
		// (the kernel keeps the first one); the event, if it comes too,
		// is recognised as the same ticket in handleEvent.
		if b, err := sock.GetOption(quicabi.QUIC_SOCKOPT_SESSION_TICKET, make([]byte, 4096)); err == nil && len(b) > 0 {
			c.ticket = append([]byte(nil), b...)
			if wantTickets {
				sess.HandleTicket(c.ticket)
			}
			if c.user[EventNewSessionTicket] {
				c.events.push(&NewSessionTicketEvent{Ticket: c.ticket})
			}
		}
	}
	for _, id := range pre {
		c.streams[id] = newStream(c, id, true, true)
		if id == 0 {
			c.early0.Store(true)
		}
	}
	c.idle = idleTimeout(sock, cfg)
	c.active()
	go c.readLoop()
	return c, nil
}

// idleTimeout is the smaller of the two sides' max_idle_timeout, or 0 with
// keep-alives on.
func idleTimeout(sock *quicsock.Socket, cfg *Config) time.Duration {
	if cfg.KeepAlive > 0 {
		return 0
	}
	local, err1 := getTransport(sock, false)
	peer, err2 := getTransport(sock, true)
	if err1 != nil || err2 != nil {
		return 0
	}
	d := time.Duration(local.MaxIdleTimeout) * time.Microsecond
	if p := time.Duration(peer.MaxIdleTimeout) * time.Microsecond; p > 0 && (d == 0 || p < d) {
		d = p
	}
	return d
}

// active records that the application sent or received something.
func (c *Conn) active() { c.lastActive.Store(time.Now().UnixNano()) }

// LocalAddr returns the local address (a *net.UDPAddr).
func (c *Conn) LocalAddr() net.Addr {
	if ap, err := c.sock.LocalAddr(); err == nil {
		return net.UDPAddrFromAddrPort(ap)
	}
	return net.UDPAddrFromAddrPort(c.local)
}

// RemoteAddr returns the peer's address (a *net.UDPAddr); it changes when
// the peer migrates.
func (c *Conn) RemoteAddr() net.Addr {
	if ap, err := c.sock.RemoteAddr(); err == nil {
		return net.UDPAddrFromAddrPort(ap)
	}
	return net.UDPAddrFromAddrPort(c.remote)
}

// ConnectionState returns the TLS state of the handshake: version, cipher
// suite, ALPN, server name, peer certificates, whether it resumed.
func (c *Conn) ConnectionState() tls.ConnectionState { return c.sess.ConnectionState() }

// Done is closed when the connection has ended; Err then says why.
func (c *Conn) Done() <-chan struct{} { return c.closed }

// Err returns why the connection ended, or nil while it is open.
func (c *Conn) Err() error {
	select {
	case <-c.closed:
		return c.err
	default:
		return nil
	}
}

// SyscallConn gives access to the socket, for options this package does not
// cover.
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return c.sock.RawConn(), nil }

// Close closes the connection with application error code 0.
func (c *Conn) Close() error { return c.CloseWithError(0, "") }

// CloseWithError closes the connection, sending the peer a CONNECTION_CLOSE
// with the application error code and reason (at most 63 bytes) after the
// kernel has sent the data already written.
// A code above MaxErrorCode (the kernel's 32 bits) is an error matching
// ErrCodeTooLarge, and the connection stays open.
func (c *Conn) CloseWithError(code ApplicationErrorCode, reason string) error {
	kcode, err := kernelCode("close", code)
	if err != nil {
		return err
	}
	cc := quicabi.ConnectionClose{ErrCode: kcode, Phrase: reason}
	if err := cc.Validate(); err != nil {
		return fmt.Errorf("kquic: close: %w", err)
	}
	c.closeOnce.Do(func() {
		// The handshake's phrase in the close record (CloseMarker) must
		// not go out as this close's reason.
		if code != 0 || reason != "" || c.closeMarker() != "" {
			if serr := c.sock.SetOption(quicabi.QUIC_SOCKOPT_CONNECTION_CLOSE, cc.Marshal()); serr != nil && !isGone(serr) {
				err = fmt.Errorf("kquic: set close code: %w", serr)
			}
		}
		c.finish(&CloseError{Application: true, ErrorCode: code, Reason: reason})
		c.stopCreditWatch()
		if cerr := c.sock.Close(); cerr != nil && err == nil {
			err = cerr
		}
		<-c.readerOut
		if c.sess != nil { // nil over a scripted kernel (tests)
			c.sess.Close()
		}
	})
	return err
}

// finish records why the connection ended and wakes every waiter.
func (c *Conn) finish(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.closed:
		return
	default:
	}
	c.err = err
	close(c.closed)
}

// endGrace bounds how long a call that the kernel told the connection had
// ended (EPIPE, ENOTCONN) waits for the receiver to read why: the close
// record arrives as an event behind data still queued for the receiver, so
// the caller's errno comes first. It is not a poll: the wait ends as soon as
// the receiver records the reason. TestFuncCloseWithError needs it: an
// OpenStream right after the peer's close must report the peer's
// *CloseError, not ENOTCONN.
const endGrace = time.Second

// awaitEnd waits up to endGrace for the receiver to record why the
// connection ended and returns that reason, or nil if none came.
func (c *Conn) awaitEnd() error {
	t := time.NewTimer(endGrace)
	defer t.Stop()
	select {
	case <-c.closed:
		return c.err
	case <-t.C:
		return nil
	}
}

func isGone(err error) bool {
	return errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ENOTCONN) || errors.Is(err, os.ErrClosed)
}

// closeMarker is the handshake's phrase in the kernel's close record
// (handshake.Session.CloseMarker), "" if none.
func (c *Conn) closeMarker() string {
	if c.sess == nil { // a scripted kernel (tests)
		return ""
	}
	return c.sess.CloseMarker()
}

// endError says why the kernel ended the connection.
func (c *Conn) endError(err error) error {
	if errors.Is(err, os.ErrClosed) {
		return ErrClosed
	}
	c.mu.Lock()
	pc := c.peerClose
	c.mu.Unlock()
	ev := pc // the close event's record, if one came
	if pc == nil {
		if b, gerr := c.sock.GetOption(quicabi.QUIC_SOCKOPT_CONNECTION_CLOSE, make([]byte, quicabi.SizeofConnectionClose)); gerr == nil {
			if cc, derr := quicabi.UnmarshalConnectionClose(b); derr == nil {
				pc = &cc
			}
		}
	}
	gone := errors.Is(err, unix.ENOTCONN) || errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNRESET)
	if m := c.closeMarker(); m != "" && gone {
		// The record still holds the handshake's phrase: our kernel
		// closed, not the peer (the close event does not say which).
		if b, gerr := c.sock.GetOption(quicabi.QUIC_SOCKOPT_CONNECTION_CLOSE, make([]byte, quicabi.SizeofConnectionClose)); gerr == nil {
			rec, derr := quicabi.UnmarshalConnectionClose(b)
			// A stateless reset leaves the record as it was and says so in
			// the close event alone (code 0x100): the peer's.
			reset := rec.ErrCode == 0 && rec.Frame == 0 && ev != nil && *ev != (quicabi.ConnectionClose{})
			if derr == nil && rec.Phrase == m && !reset {
				return closeError(quicabi.ConnectionClose{ErrCode: rec.ErrCode, Frame: rec.Frame}, false)
			}
		}
	}
	if pc != nil && gone {
		if *pc == (quicabi.ConnectionClose{}) && c.idle > 0 {
			// All zero: the idle timer, or the peer's Close with code 0.
			// Only the first fits a connection quiet for about that long
			// (the kernel's timer runs from the last packet, which can
			// precede what the application saw, hence the slack).
			if quiet := time.Since(time.Unix(0, c.lastActive.Load())); quiet >= c.idle-c.idle/4 {
				return &IdleTimeoutError{}
			}
		}
		return closeError(*pc, true)
	}
	return fmt.Errorf("kquic: receive: %w", err)
}
