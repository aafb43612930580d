package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/net/idna"

	"kquic.dev/quicnet"
)

// Transport is an http.RoundTripper over HTTP/3: use it as
// http.Client{Transport: &http3.Transport{...}}. It keeps one QUIC
// connection per origin (host:port), opened on the first request and
// shared by the requests after it, as many at once as the server's stream
// limit allows (more wait). Its zero value is usable; its fields must not
// change once it is used.
type Transport struct {
	// TLSClientConfig is the TLS configuration of the connections (its
	// ServerName defaults to the request's host, NextProtos to "h3").
	TLSClientConfig *tls.Config

	// QUICConfig is the QUIC configuration of the connections. With
	// EnableDatagrams, a nil QUICConfig gets datagrams on, and a QUICConfig
	// without EnableDatagrams is an error.
	QUICConfig *quicnet.Config

	// Dial, if set, opens the connections instead of quicnet.Dial.
	//
	// quicnet.Dial returns once the handshake has completed, so a Dial
	// cannot send a request in 0-RTT as a quic-go Dial that calls
	// DialEarly does: with a session cache (TLSClientConfig.
	// ClientSessionCache), a Transport with Dial set needs DialEarly set
	// too, or Disable0RTT; otherwise every RoundTrip fails saying so,
	// rather than leave 0-RTT off unsaid.
	Dial func(ctx context.Context, addr string, tlsConf *tls.Config, conf *quicnet.Config) (*quicnet.Conn, error)

	// DialEarly, if set, opens the connections whose first request goes
	// in 0-RTT instead of quicnet.DialEarly: it sends data (the request's
	// HEADERS frame) on the connection's first stream, as
	// quicnet.DialEarly does, and returns that stream.
	DialEarly func(ctx context.Context, addr string, tlsConf *tls.Config, conf *quicnet.Config, data []byte) (*quicnet.Conn, *quicnet.Stream, error)

	// EnableDatagrams sends SETTINGS_H3_DATAGRAM (RFC 9297) on the
	// connections, which then need QUIC datagrams (see QUICConfig). HTTP
	// datagrams themselves go on the connection, as Server.EnableDatagrams
	// says.
	EnableDatagrams bool

	// AdditionalSettings are sent in the SETTINGS frame beside the
	// Transport's own; the settings RFC 9114, RFC 9204, RFC 9220 and RFC
	// 9297 define are refused (RoundTrip fails naming the field to use).
	AdditionalSettings map[uint64]uint64

	// Disable0RTT makes every request wait for the handshake. Otherwise,
	// when TLSClientConfig.ClientSessionCache is set, the request that
	// opens a connection to an origin is sent in 0-RTT if it is safe
	// (GET, HEAD, OPTIONS or TRACE, without a body) and the cache holds a
	// session ticket of that server that allows 0-RTT (a Server whose
	// QUICConfig has Allow0RTT); the others wait for the handshake. A
	// server that rejects the 0-RTT data gets the request again after the
	// handshake.
	Disable0RTT bool

	// MaxResponseHeaderBytes bounds a response's field section, and is
	// sent to servers as SETTINGS_MAX_FIELD_SECTION_SIZE (default 1 MiB).
	MaxResponseHeaderBytes int

	// DisableCompression stops the Transport from asking for gzip
	// (which it then decodes) when a request has no Accept-Encoding.
	DisableCompression bool

	// Logger logs protocol errors of the connections (slog.Default when
	// nil).
	Logger *slog.Logger

	initOnce sync.Once
	initErr  error
	qconf    *quicnet.Config // the connections' QUIC configuration

	mu     sync.Mutex
	conns  map[string]*clientConn
	dials  map[string]*dialCall
	closed bool
}

// init checks the Transport's fields, once, and derives the connections'
// QUIC configuration.
func (t *Transport) init() error {
	t.initOnce.Do(func() {
		if err := checkAdditionalSettings("Transport.AdditionalSettings", t.AdditionalSettings); err != nil {
			t.initErr = err
			return
		}
		t.qconf = t.QUICConfig
		if t.EnableDatagrams {
			if t.qconf == nil {
				t.qconf = &quicnet.Config{EnableDatagrams: true}
			} else if !t.qconf.EnableDatagrams {
				t.initErr = errors.New("http3: Transport.EnableDatagrams (HTTP datagrams) needs QUIC datagrams: set QUICConfig.EnableDatagrams too")
				return
			}
		}
		if t.Dial != nil && t.DialEarly == nil && !t.Disable0RTT && t.TLSClientConfig != nil && t.TLSClientConfig.ClientSessionCache != nil {
			t.initErr = errors.New("http3: Transport.Dial is set and DialEarly is not, so no request could go in 0-RTT, though TLSClientConfig.ClientSessionCache is set for it: " +
				"set DialEarly too (dialing as Dial does, with quicnet.DialEarly), or set Disable0RTT to resume sessions without 0-RTT")
		}
	})
	return t.initErr
}

type dialCall struct {
	done  chan struct{}
	cc    *clientConn
	err   error
	early *earlyRequest // the request whose header goes with the dial
}

// ErrTransportClosed is returned by RoundTrip after Close.
var ErrTransportClosed = errors.New("http3: transport closed")

// ErrNoCachedConn is returned by RoundTripOpt with OnlyCachedConn when the
// Transport has no connection to the request's origin.
var ErrNoCachedConn = errors.New("http3: no cached connection was available")

// RoundTripOpt holds the options of RoundTripOpt, as quic-go's.
type RoundTripOpt struct {
	// OnlyCachedConn makes a request that would dial a new connection
	// fail with ErrNoCachedConn instead.
	OnlyCachedConn bool
}

// The methods quic-go's client takes for a GET or HEAD it is to send in
// 0-RTT. This Transport sends them as GET and HEAD, in 0-RTT when it can,
// as it sends any GET and HEAD (see Disable0RTT).
const (
	MethodGet0RTT  = "GET_0RTT"
	MethodHead0RTT = "HEAD_0RTT"
)

// RoundTrip sends one request and returns its response once its header
// has arrived; the body streams in as it is read. Canceling the
// request's context resets the stream with H3_REQUEST_CANCELLED in both
// directions. A request the server refused unprocessed (after a GOAWAY,
// or H3_REQUEST_REJECTED) is sent once more on a new connection when its
// body can be had again (none, or GetBody).
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.RoundTripOpt(req, RoundTripOpt{})
}

// RoundTripOpt is RoundTrip with options.
func (t *Transport) RoundTripOpt(req *http.Request, opt RoundTripOpt) (*http.Response, error) {
	resp, err := t.roundTrip(req, opt)
	if err != nil && req.Body != nil {
		req.Body.Close()
	}
	return resp, err
}

func (t *Transport) roundTrip(req *http.Request, opt RoundTripOpt) (*http.Response, error) {
	if err := t.init(); err != nil {
		return nil, err
	}
	if m := req.Method; m == MethodGet0RTT || m == MethodHead0RTT {
		req = req.Clone(req.Context())
		req.Method = strings.TrimSuffix(m, "_0RTT")
	}
	if req.URL == nil {
		return nil, errors.New("http3: request without a URL")
	}
	if req.URL.Scheme != "https" {
		return nil, fmt.Errorf("http3: unsupported scheme %q (HTTP/3 is https only)", req.URL.Scheme)
	}
	if req.URL.Host == "" {
		return nil, errors.New("http3: request URL without a host")
	}
	addr, err := authorityAddr(req.URL.Host)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		var early *earlyRequest
		if attempt == 0 {
			early = t.earlyRequestFor(req)
		}
		cc, early, err := t.getConn(req.Context(), addr, early, opt.OnlyCachedConn)
		if err != nil {
			return nil, err
		}
		resp, err := cc.roundTrip(req, early)
		if err == nil || attempt > 0 || !errors.Is(err, errRetry) {
			if errors.Is(err, errRetry) {
				err = errors.Unwrap(err)
			}
			return resp, err
		}
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, errors.Unwrap(err)
			}
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, fmt.Errorf("http3: retry after %v: GetBody: %w", errors.Unwrap(err), gerr)
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}

// authorityAddr is the host:port to dial for a URL's host.
func authorityAddr(host string) (string, error) {
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		h, port = host, "443"
		if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
			h = h[1 : len(h)-1]
		}
	}
	if a, err := idna.Lookup.ToASCII(h); err == nil {
		h = a
	}
	return net.JoinHostPort(h, port), nil
}

// getConn returns the origin's connection, dialing it if there is none:
// one dial at a time per origin, shared by the requests waiting for it.
// The request that starts a dial has its header sent with it when early
// is set (see earlyRequestFor); getConn then returns early with the
// stream it went on, and nil in every other case.
func (t *Transport) getConn(ctx context.Context, addr string, early *earlyRequest, onlyCached bool) (*clientConn, *earlyRequest, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, nil, ErrTransportClosed
	}
	if cc := t.conns[addr]; cc != nil && cc.usable() {
		t.mu.Unlock()
		return cc, nil, nil
	}
	if onlyCached {
		t.mu.Unlock()
		return nil, nil, ErrNoCachedConn
	}
	d := t.dials[addr]
	mine := d == nil
	if mine {
		d = &dialCall{done: make(chan struct{}), early: early}
		if t.dials == nil {
			t.dials = map[string]*dialCall{}
		}
		t.dials[addr] = d
		go t.dial(context.WithoutCancel(ctx), addr, d)
	}
	t.mu.Unlock()
	select {
	case <-d.done:
		if mine && d.early != nil && d.early.str != nil {
			return d.cc, d.early, d.err
		}
		return d.cc, nil, d.err
	case <-ctx.Done():
		if mine && d.early != nil {
			go func() { // the request's header may be on its way: cancel it
				<-d.done
				if s := d.early.str; s != nil {
					s.CancelWrite(quicnet.StreamErrorCode(ErrCodeRequestCanceled))
					s.CancelRead(quicnet.StreamErrorCode(ErrCodeRequestCanceled))
				}
			}()
		}
		return nil, nil, ctx.Err()
	}
}

func (t *Transport) dial(ctx context.Context, addr string, d *dialCall) {
	d.cc, d.err = t.newClientConn(ctx, addr, d.early)
	t.mu.Lock()
	delete(t.dials, addr)
	if d.err == nil {
		if t.closed {
			d.cc.close(ErrCodeNoError, "")
			d.cc, d.err = nil, ErrTransportClosed
		} else {
			if t.conns == nil {
				t.conns = map[string]*clientConn{}
			}
			t.conns[addr] = d.cc
		}
	}
	t.mu.Unlock()
	close(d.done)
}

func (t *Transport) tlsConfig(addr string) *tls.Config {
	var c *tls.Config
	if t.TLSClientConfig != nil {
		c = t.TLSClientConfig.Clone()
	} else {
		c = &tls.Config{}
	}
	if c.ServerName == "" {
		host, _, _ := net.SplitHostPort(addr)
		c.ServerName = host
	}
	if len(c.NextProtos) == 0 {
		c.NextProtos = []string{NextProtoH3}
	}
	return c
}

// newClientConn dials addr; with early set, by DialEarly with its header,
// and early.str is then the stream it went on.
func (t *Transport) newClientConn(ctx context.Context, addr string, early *earlyRequest) (*clientConn, error) {
	var qc *quicnet.Conn
	var err error
	if early != nil {
		dial := t.DialEarly
		if dial == nil {
			dial = quicnet.DialEarly
		}
		qc, early.str, err = dial(ctx, addr, t.tlsConfig(addr), t.qconf, early.frame)
	} else {
		dial := t.Dial
		if dial == nil {
			dial = quicnet.Dial
		}
		qc, err = dial(ctx, addr, t.tlsConfig(addr), t.qconf)
	}
	if err != nil {
		return nil, fmt.Errorf("http3: dial %s: %w", addr, err)
	}
	if p := qc.ConnectionState().TLS.NegotiatedProtocol; p != NextProtoH3 {
		qc.CloseWithError(quicnet.ApplicationErrorCode(ErrCodeVersionFallback), "")
		return nil, fmt.Errorf("http3: %s negotiated ALPN %q, not %q", addr, p, NextProtoH3)
	}
	cc := &clientConn{t: t, addr: addr}
	max := uint64(http.DefaultMaxHeaderBytes)
	if t.MaxResponseHeaderBytes > 0 {
		max = uint64(t.MaxResponseHeaderBytes)
	}
	logger := t.Logger
	if logger == nil {
		logger = slog.Default()
	}
	c, err := newConn(qc, false, settings{MaxFieldSectionSize: max, Datagram: t.EnableDatagrams, Other: t.AdditionalSettings}, logger, cc.goAway)
	if err != nil {
		qc.CloseWithError(quicnet.ApplicationErrorCode(ErrCodeInternalError), "")
		return nil, err
	}
	cc.conn = c
	context.AfterFunc(qc.Context(), func() { t.forget(cc) })
	return cc, nil
}

// forget takes cc out of the pool.
func (t *Transport) forget(cc *clientConn) {
	t.mu.Lock()
	if t.conns[cc.addr] == cc {
		delete(t.conns, cc.addr)
	}
	t.mu.Unlock()
}

// CloseIdleConnections closes the connections with no request in flight.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	var idle []*clientConn
	for _, cc := range t.conns {
		if cc.idle() {
			idle = append(idle, cc)
		}
	}
	t.mu.Unlock()
	for _, cc := range idle {
		cc.close(ErrCodeNoError, "")
	}
}

// Close closes every connection (H3_NO_ERROR); later requests fail with
// ErrTransportClosed.
func (t *Transport) Close() error {
	t.mu.Lock()
	t.closed = true
	conns := t.conns
	t.conns = nil
	t.mu.Unlock()
	for _, cc := range conns {
		cc.close(ErrCodeNoError, "")
	}
	return nil
}

var (
	_ http.RoundTripper = (*Transport)(nil)
	_ io.Closer         = (*Transport)(nil)
)
