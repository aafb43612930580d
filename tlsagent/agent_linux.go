//go:build linux

package tlsagent

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Agent serves the kernel's handshake requests. Make it with [Listen].
type Agent struct {
	// MaxInFlight bounds the handshakes run at once (default 16); the
	// kernel keeps further requests pending until one finishes (it holds
	// at most 3 to 50 per network namespace, by memory size, and refuses
	// more).
	MaxInFlight int
	// DefaultTimeout bounds a handshake whose consumer set no timeout
	// (default 30s).
	DefaultTimeout time.Duration

	cfg    *Config
	log    *slog.Logger
	family genetlink.Family
	group  uint32
	events *genetlink.Conn // member of the tlshd group: READY notifications
	req    *genetlink.Conn // ACCEPT and DONE

	ticketKeys [][32]byte // session ticket keys of the server role, shared by all requests

	stopping atomic.Bool  // Serve is shutting down: the group socket closes
	active   atomic.Int32 // requests being handled
	mu       sync.Mutex
	closed   bool
}

// Listen joins the handshake family's tlshd group: from then on the kernel
// queues its consumers' requests for this process (until then it refuses them
// with ESRCH). cfg may be nil (the zero Config); log nil logs to
// slog.Default().
//
// It fails with an error wrapping ErrNotSupported when the kernel has no
// handshake family (CONFIG_NET_HANDSHAKE), and with EPERM without
// CAP_NET_ADMIN (the family's accept and done need it).
func Listen(cfg *Config, log *slog.Logger) (*Agent, error) {
	a, err := newAgent(cfg, log)
	if err != nil {
		return nil, err
	}
	ev, err := genetlink.Dial(nil)
	if err != nil {
		return nil, fmt.Errorf("tlsagent: open a generic netlink socket: %w", err)
	}
	fam, err := ev.GetFamily(familyName)
	if err != nil {
		ev.Close()
		if errors.Is(err, unix.ENOENT) {
			return nil, fmt.Errorf("tlsagent: the kernel has no %q generic netlink family: it needs CONFIG_NET_HANDSHAKE (Linux 6.4 or later; the project's guest kernel has it): %w", familyName, ErrNotSupported)
		}
		return nil, fmt.Errorf("tlsagent: look up the %q family: %w", familyName, err)
	}
	var group uint32
	found := false
	for _, g := range fam.Groups {
		if g.Name == groupTLSHD {
			group, found = g.ID, true
		}
	}
	if !found {
		ev.Close()
		return nil, fmt.Errorf("tlsagent: the %q family has no %q multicast group: %w", familyName, groupTLSHD, ErrNotSupported)
	}
	req, err := genetlink.Dial(nil)
	if err != nil {
		ev.Close()
		return nil, fmt.Errorf("tlsagent: open a generic netlink socket: %w", err)
	}
	if err := ev.JoinGroup(group); err != nil {
		ev.Close()
		req.Close()
		return nil, fmt.Errorf("tlsagent: join the %s/%s multicast group: %w", familyName, groupTLSHD, err)
	}
	a.family, a.group, a.events, a.req = fam, group, ev, req
	if len(a.cfg.Keyrings) > 0 {
		linked, err := linkKeyrings(a.cfg.Keyrings)
		if err != nil {
			a.Close()
			return nil, fmt.Errorf("tlsagent: %w", err)
		}
		a.log.Info("linked keyrings into the user keyring", "keyrings", linked)
	} else if linked, _ := linkKeyrings(nil); len(linked) > 0 {
		a.log.Info("linked keyrings into the user keyring", "keyrings", linked)
	}
	for _, k := range a.cfg.Ignored {
		a.log.Warn("configuration key has no effect in this agent", "key", k)
	}
	return a, nil
}

func newAgent(cfg *Config, log *slog.Logger) (*Agent, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	if log == nil {
		log = slog.Default()
	}
	if err := cfg.load(); err != nil {
		return nil, fmt.Errorf("tlsagent: configuration: %w", err)
	}
	a := &Agent{cfg: cfg, log: log, ticketKeys: make([][32]byte, 1)}
	rand.Read(a.ticketKeys[0][:])
	return a, nil
}

// Family reports the handshake family as the kernel registered it.
func (a *Agent) Family() genetlink.Family { return a.family }

// Close leaves the group and closes the netlink sockets; [Agent.Serve]
// closes it on return.
func (a *Agent) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	var err error
	if a.events != nil {
		err = a.events.Close()
	}
	if a.req != nil {
		err = errors.Join(err, a.req.Close())
	}
	return err
}

// Serve handles requests until ctx ends (or the netlink socket fails). Then
// it leaves the group, so that the kernel refuses new requests at once
// (ESRCH) rather than queue them for nobody, answers the requests still
// pending in the kernel with ECANCELED, waits for the handshakes in flight
// to be answered, and returns nil (or the error that stopped it).
func (a *Agent) Serve(ctx context.Context) error {
	max := a.MaxInFlight
	if max <= 0 {
		max = 16
	}
	sem := make(chan struct{}, max)
	kick := make(chan struct{}, 1)
	poke := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	recvErr := make(chan error, 1)
	go func() { recvErr <- a.receive(poke) }()
	poke() // requests queued before we joined

	var wg sync.WaitGroup
	// Handshakes in flight run to their own timeouts after ctx ends.
	hctx := context.WithoutCancel(ctx)
	// The kernel links a request's keyring into the process keyring of
	// the thread that accepts it, which only that thread possesses: accept
	// on one thread, and link the keyring on for the handlers there.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var serveErr error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-recvErr:
			serveErr = err
			break loop
		case <-kick:
		}
		for {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				break loop
			}
			r, err := a.accept()
			if err != nil {
				<-sem
				if errors.Is(err, errAnswered) {
					continue
				}
				if errors.Is(err, unix.EPERM) {
					serveErr = fmt.Errorf("tlsagent: handshake accept: %w (the handshake family's commands need CAP_NET_ADMIN)", err)
					break loop
				}
				if !errors.Is(err, unix.EAGAIN) {
					a.log.Error("handshake accept failed", "err", err)
				}
				break
			}
			unlink := a.linkRequestKeyring(r)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem; poke() }()
				a.serveOne(hctx, r)
				unlink()
			}()
		}
	}
	// Shutdown: no new requests; those still pending in the kernel will
	// not be served, so answer them now; then wait for those in flight.
	a.stopping.Store(true)
	a.events.Close()
	n := 0
	for {
		r, err := a.accept()
		if errors.Is(err, errAnswered) {
			continue
		}
		if err != nil {
			break
		}
		a.log.Warn("handshake request refused: the agent is shutting down", "request", r.String(), "status", "ECANCELED")
		if err := a.done(r, uint32(unix.ECANCELED), nil); err != nil {
			a.log.Error("could not report the refusal to the kernel", "request", r.String(), "err", err)
		}
		unix.Close(r.FD)
		n++
	}
	a.log.Info("shutting down: answering the requests in flight", "refused_pending", n, "in_flight", a.active.Load())
	wg.Wait()
	a.Close()
	return serveErr
}

// linkRequestKeyring links the keyring a request names into the agent's
// keyring for the handler; the returned func unlinks it.
func (a *Agent) linkRequestKeyring(r *Request) func() {
	if r.Keyring == tlsNoKeyring {
		return func() {}
	}
	if _, err := unix.KeyctlInt(unix.KEYCTL_LINK, int(r.Keyring), agentKeyring, 0, 0); err != nil {
		a.log.Warn("the request's keyring is not linked: its keys may not be readable", "request", r.String(), "keyring", r.Keyring, "err", err)
		return func() {}
	}
	return func() { unix.KeyctlInt(unix.KEYCTL_UNLINK, int(r.Keyring), agentKeyring, 0, 0) }
}

// receive reads the group's notifications and pokes the dispatcher for each
// READY; an overrun of the socket's buffer (ENOBUFS: notifications were lost)
// pokes it too, since the dispatcher drains the kernel's queue anyway.
func (a *Agent) receive(poke func()) error {
	for {
		msgs, _, err := a.events.Receive()
		if err != nil {
			if errors.Is(err, unix.ENOBUFS) {
				poke()
				continue
			}
			if a.stopping.Load() || errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrClosed) {
				return nil
			}
			return fmt.Errorf("tlsagent: receive from the %s group: %w", groupTLSHD, err)
		}
		for _, m := range msgs {
			if isReady(m) {
				poke()
			}
		}
	}
}

// errAnswered is a request accept could not use and has answered.
var errAnswered = errors.New("handshake request answered with an error")

// accept takes the next pending request (EAGAIN: none).
func (a *Agent) accept() (*Request, error) {
	msgs, err := a.req.Execute(acceptMessage(), a.family.ID, netlink.Request)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		if m.Header.Command != cmdAccept {
			continue
		}
		r, err := parseAccept(m)
		if err != nil && r != nil {
			// The socket is ours: answer the request rather than
			// leave it to the consumer's timeout.
			a.log.Error("handshake request refused", "request", r.String(), "status", "EINVAL", "err", err)
			a.done(r, uint32(unix.EINVAL), nil)
			unix.Close(r.FD)
			return nil, errAnswered
		}
		return r, err
	}
	return nil, errors.New("handshake accept: the kernel replied without a request")
}

// done reports a result. The socket must still be open in this process.
func (a *Agent) done(r *Request, status uint32, remote []int32) error {
	m, err := doneMessage(r.FD, status, remote)
	if err != nil {
		return err
	}
	_, err = a.req.Execute(m, a.family.ID, netlink.Request|netlink.Acknowledge)
	if err != nil {
		return fmt.Errorf("handshake done for %s: %w", r, err)
	}
	return nil
}

// serveOne runs one request and answers it, whatever happens.
func (a *Agent) serveOne(ctx context.Context, r *Request) {
	a.active.Add(1)
	defer a.active.Add(-1)
	start := time.Now()
	a.log.Debug("handshake request accepted", "request", r.String(), "timeout", r.Timeout, "peername", r.PeerName, "peer_ids", r.PeerIDs)
	res := a.handle(ctx, r)
	log := a.log.With("request", r.String(), "peer", res.peer, "proto", res.proto)
	if res.err != nil {
		log.Error("handshake failed", "status", errnoName(res.status), "err", res.err, "after", time.Since(start).Round(time.Millisecond))
	} else {
		log.Info("handshake completed", "tls", res.summary, "after", time.Since(start).Round(time.Millisecond))
	}
	// Our copy of the socket goes first: once DONE is in, the consumer
	// may close its file and expects the socket to go with it.
	if res.release != nil {
		res.release()
	}
	if err := a.done(r, res.status, res.remote); err != nil {
		log.Error("could not report the handshake's result to the kernel", "err", err)
	}
	unix.Close(r.FD)
}

func errnoName(status uint32) string {
	switch unix.Errno(status) {
	case 0:
		return "0"
	case unix.EOPNOTSUPP: // ErrnoName says ENOTSUP, its alias on Linux
		return "EOPNOTSUPP"
	}
	if n := unix.ErrnoName(unix.Errno(status)); n != "" {
		return n
	}
	return fmt.Sprint(status)
}
