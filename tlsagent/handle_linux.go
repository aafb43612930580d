//go:build linux

package tlsagent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/handshake"
	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/quicsock"
	"kquic.dev/ktls"
)

// ErrPSKNotSupported is the failure of a PSK request: crypto/tls implements
// TLS 1.3 pre-shared keys only as session resumption, not external PSKs
// (RFC 8446 §4.2.11 with the "ext binder" label), so no standard PSK
// handshake can be made with it. The agent reads the key (a serial that does
// not exist fails with ENOKEY first) and then fails the request with
// EOPNOTSUPP.
var ErrPSKNotSupported = errors.New("TLS 1.3 external PSK handshakes are not supported: crypto/tls has none (run tlshd for PSK)")

// result is the outcome of one request.
type result struct {
	status  uint32  // errno, 0 for success
	remote  []int32 // key serials of the peer's identity
	err     error
	peer    string // the socket's peer address
	proto   string // "quic" or "tcp"
	summary string // the TLS parameters, for the log
	release func() // after DONE: restore the socket's flags, close our copy
}

func fail(status unix.Errno, err error) result { return result{status: uint32(status), err: err} }

// statusOf maps an error to the status the kernel consumer gets.
func statusOf(err error) uint32 {
	var ke *KeyError
	var errno unix.Errno
	switch {
	case errors.Is(err, ErrPSKNotSupported), errors.Is(err, ktls.ErrNoKernelTLS), errors.Is(err, ktls.ErrUnsupportedCipher):
		return uint32(unix.EOPNOTSUPP)
	case errors.As(err, &ke):
		if errors.As(ke.Err, &errno) {
			return uint32(errno)
		}
		return uint32(unix.ENOKEY)
	case errors.Is(err, handshake.ErrTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return uint32(unix.ETIMEDOUT)
	case errors.Is(err, context.Canceled):
		return uint32(unix.ECANCELED)
	}
	return uint32(unix.EACCES)
}

// answerGrace is how long after a request's timeout the agent waits for the
// handshake to fail on its own (with the stage it reached) before it answers
// ETIMEDOUT itself.
const answerGrace = 100 * time.Millisecond

// handle runs one request's handshake on its socket. It never closes r.FD.
//
// The request's timeout is the consumer's: the agent answers by then (and
// answerGrace), whatever the handshake is doing. The context bounds only the
// handshake's waits on the socket; its CPU work (key shares, signatures,
// certificate checks) and a late wakeup on a starved machine run past it,
// and a consumer whose own wait ends first gives up and fails its request
// with an error of its own (the module's sample: EINVAL, 2 s after the 3 s
// it asked for) while the agent still works on a socket nobody waits for.
// At the deadline the agent's copies of the socket are closed, so the
// abandoned handshake fails at its next use of it, and ETIMEDOUT goes out.
func (a *Agent) handle(ctx context.Context, r *Request) (res result) {
	proto, err := unix.GetsockoptInt(r.FD, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	if err != nil {
		return fail(unix.EBADF, fmt.Errorf("the request's fd %d: getsockopt(SO_PROTOCOL): %w", r.FD, err))
	}
	peer := ""
	if sa, err := unix.Getpeername(r.FD); err == nil {
		if ap := quicsock.AddrPort(sa); ap.IsValid() {
			peer = ap.String()
		}
	}
	defer func() { res.peer = peer }()
	switch r.Type {
	case MessageTypeClientHello, MessageTypeServerHello:
	default:
		return fail(unix.EINVAL, fmt.Errorf("unknown handshake message type %d (want client_hello or server_hello)", uint32(r.Type)))
	}
	switch r.Auth {
	case AuthUnauth, AuthX509, AuthPSK:
	default:
		return fail(unix.EINVAL, fmt.Errorf("unknown auth mode %d (want unauth, psk or x509)", uint32(r.Auth)))
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = a.DefaultTimeout
		if timeout <= 0 {
			timeout = 30 * time.Second
		}
	}
	deadline := time.Now().Add(timeout)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var run func(*os.File, *held) result
	switch proto {
	case quicabi.IPPROTO_QUIC:
		run = func(f *os.File, h *held) result { return a.handleQUIC(ctx, r, peer, f, h) }
	case unix.IPPROTO_TCP:
		run = func(f *os.File, h *held) result { return a.handleTCP(ctx, r, peer, f, h) }
	default:
		return fail(unix.EOPNOTSUPP, fmt.Errorf("the socket is neither QUIC nor TCP (SO_PROTOCOL %d): this agent handshakes on IPPROTO_QUIC and IPPROTO_TCP sockets only", proto))
	}
	// The handshake's copy of the socket is made here, before it may be
	// abandoned: it never touches r.FD, which the caller closes after
	// the answer (its number may then be another request's).
	f, release, err := dupFile(r.FD, protoName(proto))
	if err != nil {
		return fail(unix.EBADF, err)
	}
	h := &held{}
	h.add(release)
	out := make(chan result, 1)
	go func() { out <- run(f, h) }()
	timer := time.NewTimer(time.Until(deadline) + answerGrace)
	defer timer.Stop()
	select {
	case res = <-out:
	case <-timer.C:
		h.release()
		res = fail(unix.ETIMEDOUT, fmt.Errorf("no result within the request's timeout of %v (and %v): answered now, the handshake abandoned: %w", timeout, answerGrace, context.DeadlineExceeded))
	}
	res.release = h.release
	res.proto = protoName(proto)
	if res.err != nil && res.status == 0 {
		res.status = statusOf(res.err)
	}
	return res
}

func protoName(proto int) string {
	if proto == unix.IPPROTO_TCP {
		return "tcp"
	}
	return "quic"
}

// held is the agent's copies of a request's socket: released once, by the
// answer or at the request's deadline, whichever comes first; a copy added
// after that is released at once.
type held struct {
	mu       sync.Mutex
	fns      []func()
	released bool
}

func (h *held) add(fn func()) {
	h.mu.Lock()
	if !h.released {
		h.fns = append(h.fns, fn)
		fn = nil
	}
	h.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// release closes the copies, the last added first.
func (h *held) release() {
	h.mu.Lock()
	fns := h.fns
	h.fns, h.released = nil, true
	h.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}

// tlsConfig builds the crypto/tls configuration of a request. For a client,
// serverName is what the server's certificate is checked against.
func (a *Agent) tlsConfig(r *Request, serverName string, alpn []string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS13, NextProtos: alpn}
	client := r.Type == MessageTypeClientHello
	side := &a.cfg.Server
	if client {
		side = &a.cfg.Client
	}
	if r.Auth == AuthPSK {
		ids := r.PeerIDs
		if client && len(ids) == 0 {
			return nil, &KeyError{0, "PSK", errors.New("the request names no key")}
		}
		for _, id := range ids {
			if id == tlsNoPeerID && !client {
				continue // a server is told no key: it would look the client's identity up
			}
			if _, err := loadPSK(id); err != nil {
				return nil, err
			}
		}
		return nil, ErrPSKNotSupported
	}
	var cert *tls.Certificate
	switch {
	case client && r.Auth == AuthUnauth:
		// An anonymous client presents nothing.
	case r.CertSerial != tlsNoCert || r.KeySerial != tlsNoPrivkey:
		c, err := loadKeyPair(r.CertSerial, r.KeySerial)
		if err != nil {
			return nil, err
		}
		cert = c
	default:
		cert = side.cert
	}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	if client {
		cfg.ServerName = serverName
		cfg.RootCAs = side.roots
		if r.Auth == AuthUnauth {
			// The consumer asked for an unauthenticated session
			// (tls_client_hello_anon): the only case where the server
			// is not verified.
			cfg.InsecureSkipVerify = true
		}
		return cfg, nil
	}
	if cert == nil {
		return nil, &KeyError{0, "certificate", errors.New("the server role has no certificate: set x509.certificate and x509.private_key in [authenticate.server], or pass key serials")}
	}
	cfg.ClientCAs = side.roots
	cfg.ClientAuth = tls.VerifyClientCertIfGiven
	cfg.SetSessionTicketKeys(a.ticketKeys)
	return cfg, nil
}

// peerIdentity puts the verified peer certificates into the session keyring
// and returns their serials, for remote-auth.
func (a *Agent) peerIdentity(st tls.ConnectionState, name string) []int32 {
	var ids []int32
	for _, c := range st.PeerCertificates {
		id, err := addPeerCert(c.Raw, name)
		if err != nil {
			a.log.Warn("peer identity not reported", "err", err)
			return ids
		}
		ids = append(ids, id)
	}
	return ids
}

func summary(st tls.ConnectionState) string {
	s := tls.VersionName(st.Version) + " " + tls.CipherSuiteName(st.CipherSuite)
	if st.NegotiatedProtocol != "" {
		s += " alpn=" + st.NegotiatedProtocol
	}
	if st.DidResume {
		s += " resumed"
	}
	return s
}

// serverName is the request's peer name, or the peer's address (crypto/tls
// checks IP SANs then).
func serverName(r *Request, peer string) string {
	if r.PeerName != "" {
		return r.PeerName
	}
	if ap, err := netip.ParseAddrPort(peer); err == nil {
		return ap.Addr().Unmap().String()
	}
	return ""
}

// dupFile gives the handshake its own non-blocking copy of the socket in
// Go's poller; release restores the blocking mode the consumer's file had
// (the flag belongs to the open file, shared with the kernel consumer) and
// closes the copy.
func dupFile(fd int, name string) (*os.File, func(), error) {
	nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("dup the socket: %w", err)
	}
	fl, err := unix.FcntlInt(uintptr(nfd), unix.F_GETFL, 0)
	if err != nil {
		unix.Close(nfd)
		return nil, nil, fmt.Errorf("read the socket's flags: %w", err)
	}
	if err := unix.SetNonblock(nfd, true); err != nil {
		unix.Close(nfd)
		return nil, nil, fmt.Errorf("make the socket non-blocking: %w", err)
	}
	f := os.NewFile(uintptr(nfd), name)
	release := func() {
		if fl&unix.O_NONBLOCK == 0 {
			unix.SetNonblock(fd, false)
		}
		f.Close()
	}
	return f, release, nil
}

// handleTCP runs the handshake of a TCP socket (NFS over TLS, RFC 9289) with
// crypto/tls and hands the record layer to the kernel (kTLS): after DONE the
// consumer reads and writes plaintext on a socket with the "tls" ULP.
func (a *Agent) handleTCP(ctx context.Context, r *Request, peer string, f *os.File, h *held) result {
	conn, err := net.FileConn(f) // its own fd, closed with f's
	if err != nil {
		return fail(unix.EBADF, fmt.Errorf("use the TCP socket: %w", err))
	}
	h.add(func() { conn.Close() })
	var res result
	client := r.Type == MessageTypeClientHello
	name := serverName(r, peer)
	cfg, err := a.tlsConfig(r, name, nil)
	if err != nil {
		res.err = fmt.Errorf("configure: %w", err)
		return res
	}
	var kc *ktls.Conn
	if client {
		kc, err = ktls.Client(ctx, conn, &ktls.Config{TLS: cfg})
	} else {
		kc, err = ktls.Server(ctx, conn, &ktls.Config{TLS: cfg})
	}
	if err != nil {
		res.err = err
		return res
	}
	// kc is not closed: that would send close_notify on the consumer's
	// connection. Closing our copy of the socket (release) leaves the
	// consumer's open, with its kernel TLS state.
	st := kc.ConnectionState()
	res.summary = summary(st)
	if r.Auth == AuthX509 || !client {
		res.remote = a.peerIdentity(st, name)
	}
	return res
}
