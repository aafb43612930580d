//go:build linux

package remote

import (
	"context"
	"crypto/hmac"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/transport"
)

// Config is how a client finds and authenticates a kqbench server.
type Config struct {
	// Token is the shared secret both ends prove they know.
	Token string
	// Fingerprint is the SHA-256 of the server's certificate that the
	// server printed at start (hex, colons and case ignored). Empty trusts
	// the certificate on first use: the token check, which the server must
	// pass too and which is bound to the TLS connection, still
	// authenticates it; Client.Fingerprint says which it was.
	Fingerprint string
	// Dialer dials the control connection (nil: a net.Dialer), for
	// example in a network namespace.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

	version int // for tests: speak another protocol version
}

// Client is a control connection to a kqbench server. It is the
// side.ServerSide of two-host mode: one Client drives a whole matrix.
type Client struct {
	addr    string
	conn    *tls.Conn
	cd      *codec
	mu      sync.Mutex
	fp      string
	peer    netip.Addr
	env     *results.Environment
	cert    []byte
	dev     string
	warning string
	explain bool
	sample  time.Duration
}

var _ side.ServerSide = (*Client)(nil)

// Dial connects to the kqbench server at addr (host:port), checks its
// certificate and protocol version, and proves the token.
func Dial(ctx context.Context, addr string, cfg Config) (*Client, error) {
	if cfg.Token == "" {
		return nil, errors.New("no token: give the --token the kqbench server was started with (or set $KQBENCH_TOKEN)")
	}
	version := Version
	if cfg.version != 0 {
		version = cfg.version
	}
	want := normalizeFingerprint(cfg.Fingerprint)
	var got string
	tcfg := &tls.Config{
		MinVersion: tls.VersionTLS13,
		// The certificate is self-signed: it is checked against the pinned
		// fingerprint below, and the server proves the token.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("no certificate")
			}
			got = Fingerprint(cs.PeerCertificates[0].Raw)
			if want != "" && !hmac.Equal([]byte(got), []byte(want)) {
				return ErrFingerprint
			}
			return nil
		},
	}
	dial := cfg.Dialer
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	raw, err := dial(hctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the kqbench server at %s: %w (is `kqbench server` running there, listening on that port, and is the port open in its firewall?)", addr, err)
	}
	conn := tls.Client(raw, tcfg)
	c := &Client{addr: addr, conn: conn, cd: newCodec(conn)}
	stop := context.AfterFunc(hctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	fail := func(err error) (*Client, error) {
		conn.Close()
		return nil, err
	}
	if err := conn.HandshakeContext(hctx); err != nil {
		if errors.Is(err, ErrFingerprint) {
			return fail(fmt.Errorf("%s: %w: it presented %s, not %s (the server makes a new certificate at every start: use the fingerprint it printed; or another machine answers)", addr, ErrFingerprint, got, want))
		}
		return fail(fmt.Errorf("%s: %w: TLS handshake: %v", addr, ErrNotServer, err))
	}
	c.fp = got
	bind, err := binding(conn)
	if err != nil {
		return fail(fmt.Errorf("%s: TLS exporter: %w", addr, err))
	}
	var g greeting
	if err := c.cd.recv(&g); err != nil || g.Proto != protocol || len(g.Nonce) < 16 {
		return fail(fmt.Errorf("%s: %w: no kqbench greeting (%v)", addr, ErrNotServer, err))
	}
	if err := c.cd.send(request{Op: opHello, Version: version, MAC: tokenMAC(cfg.Token, "client", g.Nonce, bind)}); err != nil {
		return fail(fmt.Errorf("%s: hello: %w", addr, err))
	}
	var w response
	if err := c.cd.recv(&w); err != nil {
		return fail(fmt.Errorf("%s: hello: %w (the server closed the connection; its log says why)", addr, err))
	}
	switch w.Code {
	case codeVersion:
		return fail(fmt.Errorf("%s: %w: %s", addr, ErrVersion, w.Error))
	case codeToken:
		return fail(fmt.Errorf("%s: %w: give both ends the same --token", addr, ErrTokenRefused))
	case codeBusy:
		return fail(fmt.Errorf("%s: %w: %s", addr, ErrBusy, w.Error))
	}
	if w.Error != "" {
		return fail(fmt.Errorf("%s: the server refused the connection: %s", addr, w.Error))
	}
	if !hmac.Equal(w.MAC, tokenMAC(cfg.Token, "server", g.Nonce, bind)) {
		return fail(fmt.Errorf("%s: %w: it did not prove the token (another --token, or not the server you started)", addr, ErrNotServer))
	}
	if w.Env == nil || w.Cert == nil {
		return fail(fmt.Errorf("%s: %w: its welcome lacks the environment or certificate", addr, ErrNotServer))
	}
	ap, err := netip.ParseAddrPort(conn.RemoteAddr().String())
	if err != nil {
		return fail(fmt.Errorf("%s: peer address: %w", addr, err))
	}
	c.peer, c.env, c.cert, c.dev, c.warning = ap.Addr().Unmap(), w.Env, w.Cert, w.Device, w.Warning
	return c, nil
}

// Fingerprint is the SHA-256 of the server's certificate, to pin with
// Config.Fingerprint next time.
func (c *Client) Fingerprint() string { return c.fp }

// Peer is the server host's environment.
func (c *Client) Peer() *results.Environment { return c.env }

// PeerAddr is the server's address: the benchmark connects to it too.
func (c *Client) PeerAddr() netip.Addr { return c.peer }

// Device names the server's device.
func (c *Client) Device() string { return c.dev }

// Warning is what the server found wrong with its setup, or "".
func (c *Client) Warning() string { return c.warning }

// Close ends the session: the server stops any sample and restores its
// device.
func (c *Client) Close() error { return c.conn.Close() }

// call sends a request and waits for its response.
func (c *Client) call(ctx context.Context, q request) (response, error) {
	var r response
	err := c.exchange(ctx, q.Op, func(sampleMS int64) (any, error) {
		q.SampleMS = sampleMS
		return q, nil
	}, &r)
	return r, err
}

// exchange sends the message msg makes (given the sample time to send
// with every request, in milliseconds) and decodes the answer into answer
// (a pointer, or nil), returning the error the server answered, if any.
func (c *Client) exchange(ctx context.Context, op string, msg func(sampleMS int64) (any, error), answer any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(60 * time.Second)
	}
	c.conn.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { c.conn.SetDeadline(time.Now()) })
	defer stop()
	m, err := msg(c.sample.Milliseconds())
	if err != nil {
		return fmt.Errorf("kqbench server %s: %s: %w", c.addr, op, err)
	}
	var r response
	if err := c.cd.send(m); err != nil {
		// The server may have cut the session off and closed: its notice
		// says why, if it is there to read.
		if rerr := c.cd.recv(&r); rerr == nil && r.Code == codeIdle {
			return fmt.Errorf("kqbench server %s: %s: %w", c.addr, op, cutOffError(r.Error))
		}
		return fmt.Errorf("kqbench server %s: %s: %w", c.addr, op, err)
	}
	var raw json.RawMessage
	if err := c.cd.recv(&raw); err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return fmt.Errorf("kqbench server %s: %s: %w (the control connection failed; the server's log may say why)", c.addr, op, err)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("kqbench server %s: %s: %w", c.addr, op, err)
	}
	if answer != nil {
		if err := json.Unmarshal(raw, answer); err != nil {
			return fmt.Errorf("kqbench server %s: %s: the answer: %w", c.addr, op, err)
		}
	}
	if r.Code == codeIdle {
		return fmt.Errorf("kqbench server %s: %s: %w", c.addr, op, cutOffError(r.Error))
	}
	if r.Error != "" {
		return errors.New(r.Error)
	}
	return nil
}

// cutOffError is the server's message on cutting the session off, which
// says so itself; it is ErrCutOff.
type cutOffError string

func (e cutOffError) Error() string        { return string(e) }
func (e cutOffError) Is(target error) bool { return target == ErrCutOff }

// SetSampleTime tells the server how long this client's samples take (the
// warmup and measured time), with every request from now on: the server
// cuts off a session silent for longer than that plus IdleMargin.
func (c *Client) SetSampleTime(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sample = d
}

// Prepare applies the MTU and GSO setting to the server's device.
func (c *Client) Prepare(ctx context.Context, mtu int, gso bool) (string, error) {
	r, err := c.call(ctx, request{Op: opPrepare, MTU: mtu, GSO: gso})
	return r.Offloads, err
}

// Available reports why the transport cannot run on the server, or nil.
func (c *Client) Available(name string) error {
	st, ok := c.env.Transports[name]
	switch {
	case !ok:
		return fmt.Errorf("the kqbench server does not know transport %s (run the same kqbench on both hosts)", name)
	case strings.HasPrefix(st, "unavailable: "):
		return errors.New(strings.TrimPrefix(st, "unavailable: "))
	}
	return nil
}

// Certificate is the server's benchmark certificate, which the client's
// TLS transports trust.
func (c *Client) Certificate() []byte { return c.cert }

// Listen starts the server of one sample on the server.
func (c *Client) Listen(ctx context.Context, name string, o transport.Options, size int) (side.ServerSample, error) {
	r, err := c.call(ctx, request{Op: opListen, Transport: name, Crypto: o.Crypto, GSO: o.GSO, Size: size, NoDelay: o.NoDelay, Explain: c.explain,
		CC: o.CC, Window: o.Window, UDPRcvBuf: o.UDPRcvBuf, ReadSize: o.ReadSize})
	if err != nil {
		return nil, err
	}
	if r.Port <= 0 || r.Port > 65535 {
		return nil, fmt.Errorf("kqbench server %s: listen: no port in the answer", c.addr)
	}
	return &sample{c: c, addr: netip.AddrPortFrom(c.peer, uint16(r.Port))}, nil
}

// SetExplain makes the server count packets, syscalls and drops on its side
// of every sample (kqbench matrix --explain).
func (c *Client) SetExplain(on bool) { c.explain = on }

// sample is the server end of one sample on the peer.
type sample struct {
	c    *Client
	addr netip.AddrPort
}

func (s *sample) Addr() netip.AddrPort { return s.addr }

func (s *sample) Snapshot(ctx context.Context) (side.ServerSnapshot, error) {
	r, err := s.c.call(ctx, request{Op: opSnapshot})
	if err != nil {
		return side.ServerSnapshot{}, err
	}
	if r.Snapshot == nil || r.Snapshot.CPU == nil {
		return side.ServerSnapshot{}, fmt.Errorf("kqbench server %s: snapshot: no counters in the answer", s.c.addr)
	}
	return *r.Snapshot, nil
}

func (s *sample) Stop(ctx context.Context) error {
	_, err := s.c.call(ctx, request{Op: opStop})
	return err
}
