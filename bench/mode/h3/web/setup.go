package web

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"time"

	"kquic.dev/bench/latency"
)

// SetupKind is which handshake Setup measures.
type SetupKind string

// The handshakes: a full one (no session), one resuming a session from a
// ticket of an earlier connection, and one whose request goes in 0-RTT.
const (
	SetupFull    SetupKind = "full"
	SetupResumed SetupKind = "resumed"
	Setup0RTT    SetupKind = "0rtt"
)

// ErrNotSupported is returned by Setup for a handshake the transport does
// not have; the error says why.
var ErrNotSupported = errors.New("not supported by this transport")

// ticketTimeout bounds the wait for a session ticket after a connection.
const ticketTimeout = 5 * time.Second

// Setup measures rounds fresh connections of kind: the time from the
// request on a new RoundTripper (dial and handshake included) to its
// response's headers. For resumed and 0rtt each round first makes a full
// connection and waits for its session ticket. Latency summarizes the
// rounds, TTFBSeconds is their median; Resumed and Early count the
// handshakes that did resume and whose request went in 0-RTT data the
// server took.
func Setup(ctx context.Context, c *Client, kind SetupKind, rounds int) (Result, error) {
	if err := c.check(); err != nil {
		return Result{}, err
	}
	if rounds < 1 {
		return Result{}, fmt.Errorf("web: setup: %d rounds; want at least 1", rounds)
	}
	method := http.MethodGet
	switch kind {
	case SetupFull:
	case Setup0RTT:
		if c.EarlyMethod == "" {
			return Result{}, fmt.Errorf("web: %s: 0-RTT: %w: %s", c.Name, ErrNotSupported, c.NoEarlyData)
		}
		method = c.EarlyMethod
		fallthrough
	case SetupResumed:
		if c.NoResumption != "" {
			return Result{}, fmt.Errorf("web: %s: session resumption: %w: %s", c.Name, ErrNotSupported, c.NoResumption)
		}
	default:
		return Result{}, fmt.Errorf("web: setup kind %q: want %s, %s or %s", kind, SetupFull, SetupResumed, Setup0RTT)
	}
	r := newResult("setup-"+string(kind), c, nil)
	r.Conns, r.Streams, r.Size = rounds, 1, 1
	hist := latency.New()
	for range rounds {
		var cache *ticketCache
		if kind != SetupFull {
			var err error
			if cache, err = prime(ctx, c); err != nil {
				return r, err
			}
		}
		ttfb, resumed, early, err := setupOnce(ctx, c, method, cache)
		if err != nil {
			r.Errors.Add("setup", err)
			continue
		}
		hist.Record(ttfb)
		r.Requests++
		r.Bytes++
		r.Seconds += ttfb.Seconds()
		r.Resumed += b2i(resumed)
		r.Early += b2i(early)
	}
	s := hist.Summary()
	r.Latency, r.Histogram, r.TTFBSeconds = &s, hist, s.P50.Seconds()
	if r.Requests == 0 {
		return r, fmt.Errorf("web: %s setup %s: every round failed: %s", c.Name, kind, r.Errors)
	}
	return r, nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// setupOnce is one request on a fresh connection.
func setupOnce(ctx context.Context, c *Client, method string, cache *ticketCache) (ttfb time.Duration, resumed, early bool, err error) {
	var tc tls.ClientSessionCache
	if cache != nil {
		tc = cache
	}
	rt, err := c.New(tc)
	if err != nil {
		return 0, false, false, err
	}
	defer closeRT(rt)
	f, err := newFetch(ctx, rt, method, c.URL+"/obj/1")
	if err != nil {
		return 0, false, false, err
	}
	ttfb, _, resp, _, err := f.do(1)
	if err != nil {
		return 0, false, false, err
	}
	resumed = resp.TLS != nil && resp.TLS.DidResume
	if u, ok := rt.(Used0RTT); ok && method == c.EarlyMethod {
		early = u.Used0RTT() // the request itself went in 0-RTT
	}
	return ttfb, resumed, early, nil
}

// prime makes a full connection and returns the session cache once it
// holds that connection's ticket.
func prime(ctx context.Context, c *Client) (*ticketCache, error) {
	cache := &ticketCache{ClientSessionCache: tls.NewLRUClientSessionCache(4), put: make(chan struct{}, 1)}
	rt, err := open(ctx, c, cache)
	if err != nil {
		return nil, err
	}
	defer closeRT(rt)
	t := time.NewTimer(ticketTimeout)
	defer t.Stop()
	select {
	case <-cache.put:
		return cache, nil
	case <-t.C:
		return nil, fmt.Errorf("web: %s: no TLS session ticket within %v of a connection", c.Name, ticketTimeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ticketCache is a session cache that signals when it gets a session.
type ticketCache struct {
	tls.ClientSessionCache
	put chan struct{}
}

func (c *ticketCache) Put(key string, cs *tls.ClientSessionState) {
	c.ClientSessionCache.Put(key, cs)
	if cs != nil {
		select {
		case c.put <- struct{}{}:
		default:
		}
	}
}
