//go:build linux

package tlsagent

// The handshakes of QUIC sockets: the server's and the client's, and the
// session tickets a client keeps.

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/handshake"
	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/quicsock"
)

// handleQUIC runs the handshake of a kernel QUIC socket. The consumer's
// settings come from the socket, as with tlshd: the ALPN list, the session
// data to resume (client), whether to wait for a session ticket
// (quic_config.receive_session_ticket, in seconds) and whether to ask for a
// client certificate (quic_config.certificate_request).
func (a *Agent) handleQUIC(ctx context.Context, r *Request, peer string, f *os.File, h *held) result {
	var res result
	sock, err := quicsock.FromConn(f)
	if err != nil {
		res.status, res.err = uint32(unix.EBADF), err
		return res
	}
	var alpn []string
	if b, err := sock.GetOption(quicabi.QUIC_SOCKOPT_ALPN, make([]byte, 256)); err == nil && len(b) > 0 {
		for _, p := range strings.Split(strings.TrimRight(string(b), "\x00"), ",") {
			if p = strings.TrimSpace(p); p != "" {
				alpn = append(alpn, p)
			}
		}
	}
	var qc quicabi.Config
	if b, err := sock.GetOption(quicabi.QUIC_SOCKOPT_CONFIG, make([]byte, quicabi.SizeofConfig)); err == nil {
		qc, _ = quicabi.UnmarshalConfig(b)
	}
	client := r.Type == MessageTypeClientHello
	name := serverName(r, peer)
	cfg, err := a.tlsConfig(r, name, alpn)
	if err != nil {
		res.err = fmt.Errorf("configure: %w", err)
		return res
	}
	if !client {
		return a.quicServer(ctx, r, peer, f, sock, cfg, qc, res)
	}
	return a.quicClient(ctx, r, name, f, sock, cfg, qc, res)
}

// quicServer runs the server's handshake on the socket f (sock): a client
// certificate asked for as quic_config says, the consumer's ticket key, and
// a session ticket sent after.
func (a *Agent) quicServer(ctx context.Context, r *Request, peer string, f *os.File, sock *quicsock.Socket, cfg *tls.Config, qc quicabi.Config, res result) result {
	switch qc.CertificateRequest {
	case 1:
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case 2:
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		cfg.ClientAuth = tls.NoClientCert
	}
	// The consumer's ticket key (a server socket's SESSION_TICKET is
	// the master key the kernel derives from the client's address, or
	// the one the consumer set), so that tickets outlive this agent.
	if b, err := sock.GetOption(quicabi.QUIC_SOCKOPT_SESSION_TICKET, make([]byte, 4096)); err == nil && len(b) > 0 {
		cfg.SetSessionTicketKeys([][32]byte{sha256.Sum256(b)})
	}
	sess, err := handshake.Server(ctx, f, cfg)
	if err != nil {
		res.err = err
		return res
	}
	defer sess.Close()
	// The consumer's closes must not send the handshake's phrase.
	sess.ClearCloseMarker()
	st := sess.ConnectionState()
	if err := sess.SendSessionTicket(true); err != nil {
		a.log.Warn("no session ticket sent", "request", r.String(), "err", err)
	}
	res.summary = summary(st)
	res.remote = a.peerIdentity(st, peer)
	return res
}

// quicClient runs the client's handshake on the socket f (sock): resuming
// the session the consumer kept (its early data in 0-RTT), and keeping the
// server's ticket for the next when quic_config asks for one.
func (a *Agent) quicClient(ctx context.Context, r *Request, name string, f *os.File, sock *quicsock.Socket, cfg *tls.Config, qc quicabi.Config, res result) result {
	// Client: resume what the consumer kept from an earlier connection.
	cache := &oneSession{}
	if b, err := sock.GetOption(quicabi.QUIC_SOCKOPT_SESSION_TICKET, make([]byte, 4096)); err == nil && len(b) > 0 {
		if cs, err := decodeSession(b); err != nil {
			a.log.Warn("session data not resumed: a full handshake follows", "request", r.String(), "err", err)
		} else {
			cache.cs = cs
		}
	}
	if cache.cs != nil || qc.ReceiveSessionTicket > 0 {
		cfg.ClientSessionCache = cache
		if cfg.ServerName == "" {
			res.err = errors.New("session resumption needs a server name: the request has no peer name and the socket no peer address")
			return res
		}
	}
	var sess *handshake.Session
	var err error
	if cache.cs != nil {
		// The consumer queued its early data before the request: it
		// leaves in 0-RTT packets once the early key is installed.
		sess, err = handshake.ClientEarly(ctx, f, cfg, func() error { return nil })
	} else {
		sess, err = handshake.Client(ctx, f, cfg)
	}
	if err != nil {
		res.err = err
		return res
	}
	defer sess.Close()
	sess.ClearCloseMarker() // as the server's
	st := sess.ConnectionState()
	res.summary = summary(st)
	if sess.EarlyDataAccepted() {
		res.summary += " 0-rtt"
	}
	if r.Auth == AuthX509 {
		res.remote = a.peerIdentity(st, name)
	}
	if qc.ReceiveSessionTicket > 0 {
		if err := a.keepTicket(ctx, sock, sess, cache, time.Duration(qc.ReceiveSessionTicket)*time.Second); err != nil {
			a.log.Warn("no session data kept for resumption", "request", r.String(), "err", err)
		}
	}
	return res
}

// keepTicket waits up to wait for the server's NewSessionTicket, turns it
// into session data and gives that to the consumer (setsockopt
// SESSION_TICKET), which sets it on its next socket to resume. The kernel
// raises no wakeup for a ticket unless the socket's NEW_SESSION_TICKET event
// is on, and that event would be queued to the consumer's own reads: the
// ticket is polled for, as tlshd does.
func (a *Agent) keepTicket(ctx context.Context, sock *quicsock.Socket, sess *handshake.Session, cache *oneSession, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	var nst []byte
	for {
		b, err := sock.GetOption(quicabi.QUIC_SOCKOPT_SESSION_TICKET, make([]byte, 4096))
		if err != nil {
			return fmt.Errorf("read the session ticket: %w", err)
		}
		if len(b) > 0 {
			nst = b
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server sent no session ticket within %v", wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := sess.HandleTicket(nst); err != nil {
		return err
	}
	if cache.put == nil {
		return errors.New("the server's ticket gave no session to keep")
	}
	data, err := encodeSession(cache.put)
	if err != nil {
		return err
	}
	if err := sock.SetOption(quicabi.QUIC_SOCKOPT_SESSION_TICKET, data); err != nil {
		return fmt.Errorf("give %d bytes of session data to the kernel: %w", len(data), err)
	}
	return nil
}
