package kquic

import (
	"bytes"
	"context"
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
		if code != 0 || reason != "" {
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

// endError says why the kernel ended the connection.
func (c *Conn) endError(err error) error {
	if errors.Is(err, os.ErrClosed) {
		return ErrClosed
	}
	c.mu.Lock()
	pc := c.peerClose
	c.mu.Unlock()
	if pc == nil {
		if b, gerr := c.sock.GetOption(quicabi.QUIC_SOCKOPT_CONNECTION_CLOSE, make([]byte, quicabi.SizeofConnectionClose)); gerr == nil {
			if cc, derr := quicabi.UnmarshalConnectionClose(b); derr == nil {
				pc = &cc
			}
		}
	}
	if pc != nil && (errors.Is(err, unix.ENOTCONN) || errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNRESET)) {
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

// watchCredit makes flowSig tell a writer held back by flow control that
// credit may have come, while one is (creditWaiters). unwatchCredit undoes
// it.
//
// Stream credit (MAX_STREAM_DATA) comes with the module's
// QUIC_EVENT_STREAM_MAX_DATA, turned on here (unless the application has
// it on): handleEvent broadcasts flowSig. Connection credit (MAX_DATA)
// has no event: the module's MAX_DATA handler (quic_frame_max_data_process)
// only wakes the socket's writers (sk_write_space), that is EPOLLOUT, and
// poll reports the socket writable only while the connection's window is
// open. A writer cannot wait for that in the poller on the socket itself:
// the wait would keep the descriptor's write lock, which every other
// writer and SendDatagram need, for as long as the peer withholds credit.
// So a goroutine waits for it on a second descriptor of the socket
// (creditFile, registered with the poller on its own) and broadcasts
// flowSig at every EPOLLOUT: MAX_DATA, MAX_STREAM_DATA, acknowledgements
// that free buffer space. Waiting writers capture flowSig before their
// sendmsg, so none of these is missed. If the descriptor cannot be had
// (or over a scripted kernel), writers retry every connCreditRetry.
func (c *Conn) watchCredit() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.creditWaiters++
	if c.creditWaiters != 1 {
		return
	}
	if !c.user[EventStreamMaxData] {
		_ = c.sock.SetOption(quicabi.QUIC_SOCKOPT_EVENT, quicabi.EventOption{Type: quicabi.QUIC_EVENT_STREAM_MAX_DATA, On: true}.Marshal())
	}
	if c.creditFile == nil && c.Err() == nil {
		if f, err := c.sock.Dup(); err == nil {
			c.creditFile = f
			go c.watchWritable(f)
		}
	}
}

// watchWritable broadcasts flowSig at every EPOLLOUT on f (and once at
// the start), until f is closed.
func (c *Conn) watchWritable(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Write(func(uintptr) bool {
		c.mu.Lock()
		c.flowSig.broadcast()
		c.mu.Unlock()
		return false // wait for the next EPOLLOUT
	})
}

// creditWatched reports whether creditFile is watched: writers need not
// retry on a timer. Call with c.mu held.
func (c *Conn) creditWatched() bool { return c.creditFile != nil }

func (c *Conn) unwatchCredit() {
	c.mu.Lock()
	c.creditWaiters--
	if c.creditWaiters != 0 {
		c.mu.Unlock()
		return
	}
	if !c.user[EventStreamMaxData] && c.Err() == nil {
		_ = c.sock.SetOption(quicabi.QUIC_SOCKOPT_EVENT, quicabi.EventOption{Type: quicabi.QUIC_EVENT_STREAM_MAX_DATA, On: false}.Marshal())
	}
	f := c.creditFile
	c.creditFile = nil
	c.mu.Unlock()
	if f != nil {
		f.Close() // outside c.mu: it waits for watchWritable, which takes it
	}
}

// stopCreditWatch closes creditFile, so that the socket is released when
// the connection closes it (the kernel frees a socket once its last
// descriptor is closed).
func (c *Conn) stopCreditWatch() {
	c.mu.Lock()
	f := c.creditFile
	c.creditFile = nil
	c.mu.Unlock()
	if f != nil {
		f.Close()
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
