//go:build linux

package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Handshake mode (kqbench matrix --mode handshake) measures connection
// setup: every exchange is a fresh connection on which the client sends a
// request of Size bytes and the server answers with Size bytes. The client
// times it from the start of the dial to the first byte of the answer.

// ExchangeTimeout bounds one exchange of handshake mode (dial, request,
// answer): a handshake that neither completes nor fails is an error after
// it, never a hang.
const ExchangeTimeout = 10 * time.Second

// HandshakeServer answers the exchanges of handshake mode.
type HandshakeServer interface {
	// Addr is the address the client dials.
	Addr() netip.AddrPort
	// Close stops listening and ends every connection, and says whether
	// the server's goroutines stopped.
	Close() error
}

// Exchange is one measured connection of handshake mode.
type Exchange struct {
	// TTFB is from the start of the dial to the first byte of the answer.
	TTFB time.Duration
	// Resumed says the TLS session was resumed from a ticket; Early that
	// the server accepted the request as 0-RTT data.
	Resumed, Early bool
}

// HandshakeClient runs the exchanges of handshake mode against one server.
type HandshakeClient interface {
	// Exchange dials a fresh connection, sends req, reads len(reply)
	// bytes into reply, and closes the connection. It must be called where
	// the client's sockets belong (the client's network namespace); it may
	// be called from several goroutines at once.
	Exchange(ctx context.Context, req, reply []byte) (Exchange, error)
	// Prime makes the connection that gets the session ticket the client's
	// 0-RTT exchanges resume with, and waits for the ticket. Only for a
	// client made with early set.
	Prime(ctx context.Context, size int) error
	Close() error
}

// handshaker is a transport that handshake mode can measure.
type handshaker interface {
	listenHandshakes(addr netip.AddrPort, o Options, size int) (HandshakeServer, error)
	handshakeClient(addr netip.AddrPort, o Options, early bool) (HandshakeClient, error)
}

// ListenHandshakes starts the handshake-mode server of the named transport
// on addr, in the calling goroutine's network namespace: it answers every
// request of size bytes with size bytes, and allows 0-RTT where the
// transport has it.
func ListenHandshakes(name string, addr netip.AddrPort, o Options, size int) (HandshakeServer, error) {
	t, err := Get(name)
	if err != nil {
		return nil, err
	}
	h, ok := t.(handshaker)
	if !ok {
		return nil, fmt.Errorf("%s: no handshake mode", name)
	}
	return h.listenHandshakes(addr, o, size)
}

// NewHandshakeClient returns the handshake-mode client of the named
// transport for the server at addr. With early, its exchanges resume the
// session of the ticket Prime got and send the request as 0-RTT data;
// without, every exchange is a full handshake.
func NewHandshakeClient(name string, addr netip.AddrPort, o Options, early bool) (HandshakeClient, error) {
	t, err := Get(name)
	if err != nil {
		return nil, err
	}
	h, ok := t.(handshaker)
	if !ok {
		return nil, fmt.Errorf("%s: no handshake mode", name)
	}
	if early && !SupportsEarly(name) {
		return nil, fmt.Errorf("%s: no 0-RTT", name)
	}
	return h.handshakeClient(addr, o, early)
}

// ticketCache is a client session cache that says when a session arrived.
type ticketCache struct {
	tls.ClientSessionCache
	puts atomic.Int64
}

func newTicketCache() *ticketCache {
	return &ticketCache{ClientSessionCache: tls.NewLRUClientSessionCache(64)}
}

// Get returns a copy of the cached session: quic-go and kquic's handshake
// write to the session they resume (SessionState.EarlyData, Extra), which
// races when handshakes at once resume the one ticket. The copy is shallow:
// they replace those fields, never write into what they point to.
func (c *ticketCache) Get(key string) (*tls.ClientSessionState, bool) {
	cs, ok := c.ClientSessionCache.Get(key)
	if !ok || cs == nil {
		return cs, ok
	}
	ticket, st, err := cs.ResumptionState()
	if err != nil || st == nil {
		return cs, ok
	}
	cp := *st
	out, err := tls.NewResumptionState(ticket, &cp)
	if err != nil {
		return cs, ok
	}
	return out, true
}

func (c *ticketCache) Put(key string, cs *tls.ClientSessionState) {
	if cs != nil {
		c.puts.Add(1)
	}
	c.ClientSessionCache.Put(key, cs)
}

// prime runs one full exchange with the cache and waits up to 5s for a
// session ticket to reach it.
func (c *ticketCache) prime(ctx context.Context, size int, exchange func(ctx context.Context, req, reply []byte) (Exchange, error)) error {
	before := c.puts.Load()
	if _, err := exchange(ctx, make([]byte, size), make([]byte, size)); err != nil {
		return fmt.Errorf("the connection that gets the session ticket: %w", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.puts.Load() == before {
		if time.Now().After(deadline) {
			return errors.New("no session ticket reached the client within 5s of its first connection: 0-RTT cannot be measured")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// readAnswer reads the answer into reply and returns when its first byte
// came.
func readAnswer(r io.Reader, reply []byte) (time.Time, error) {
	n, err := r.Read(reply)
	first := time.Now()
	if n == 0 && err == nil {
		n, err = io.ReadAtLeast(r, reply, 1)
		first = time.Now()
	}
	if err != nil && !(errors.Is(err, io.EOF) && n == len(reply)) {
		return first, fmt.Errorf("read the answer: %w", err)
	}
	if _, err := io.ReadFull(r, reply[n:]); err != nil {
		return first, fmt.Errorf("read the answer: %w", err)
	}
	return first, nil
}

// answer reads a request of len(buf) bytes from s and writes as many back.
func answer(s io.ReadWriter, buf []byte) error {
	if _, err := io.ReadFull(s, buf); err != nil {
		return fmt.Errorf("read the request: %w", err)
	}
	if _, err := s.Write(buf); err != nil {
		return fmt.Errorf("write the answer: %w", err)
	}
	return nil
}

// conns tracks a handshake server's live connections, so Close can end
// them and wait for their goroutines.
type conns struct {
	mu     sync.Mutex
	open   map[io.Closer]struct{}
	closed bool
	wg     sync.WaitGroup
}

// add registers c and a goroutine serving it; false if the server closed.
func (cs *conns) add(c io.Closer) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		return false
	}
	if cs.open == nil {
		cs.open = map[io.Closer]struct{}{}
	}
	cs.open[c] = struct{}{}
	cs.wg.Add(1)
	return true
}

// done closes c and ends its goroutine.
func (cs *conns) done(c io.Closer) {
	c.Close()
	cs.mu.Lock()
	delete(cs.open, c)
	cs.mu.Unlock()
	cs.wg.Done()
}

// closeAll closes every connection and waits up to 10s for their
// goroutines.
func (cs *conns) closeAll(what string) error {
	cs.mu.Lock()
	cs.closed = true
	for c := range cs.open {
		c.Close()
	}
	cs.mu.Unlock()
	done := make(chan struct{})
	go func() { cs.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s handshake server: a connection did not end within 10s of closing it", what)
	}
}
