//go:build linux

package h3

// The mode's half on a kqbench server in two-host mode: the operations it
// adds to the control protocol, web-listen and web-stop, served by the
// server (Serve) and called by the client's end (Remote).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"

	"kquic.dev/bench/mode/h3/web"
	"kquic.dev/bench/side"
)

// The operations: start a server of the handler, and stop it (an older
// kqbench server answers "unknown operation").
const (
	opListen = "web-listen"
	opStop   = "web-stop"
)

func init() {
	side.RegisterOp([]string{opListen, opStop}, func(s side.Session) side.Op { return &serverOp{s: s} })
}

// listenArgs are web-listen's fields: the row, and the cell's congestion
// control, window and receive buffer.
type listenArgs struct {
	Transport string `json:"transport,omitempty"`
	CC        string `json:"cc,omitempty"`
	Window    int    `json:"window,omitempty"`
	UDPRcvBuf int    `json:"udp_rcvbuf,omitempty"`
}

// listenAnswer and stopAnswer are the answers' fields: the server
// started, and its namespace's counters over its life.
type listenAnswer struct {
	Web *RemoteServer `json:"web,omitempty"`
}

type stopAnswer struct {
	WebCounts *Counts `json:"web_counts,omitempty"`
}

// serverOp is a session's server of the handler, if one runs.
type serverOp struct {
	s   side.Session
	web *Serving
}

// Handle starts (web-listen) or stops (web-stop) the server of the
// handler on the server's device.
func (o *serverOp) Handle(name string, req json.RawMessage) (any, error) {
	if name == opListen {
		var q listenArgs
		if err := json.Unmarshal(req, &q); err != nil {
			return nil, err
		}
		o.Stop()
		srv, info, err := Serve(q.Transport, o.s.Do, o.s.Addr(), Config{Window: q.Window, UDPRcvBuf: q.UDPRcvBuf, CC: q.CC})
		if err != nil {
			return nil, fmt.Errorf("%s: %v", q.Transport, err)
		}
		o.web = srv
		return listenAnswer{Web: &info}, nil
	}
	if o.web == nil {
		return nil, errors.New("web-stop: no server of the handler is running (send web-listen first)")
	}
	counts, err := o.web.Stop()
	o.web = nil
	return stopAnswer{WebCounts: &counts}, err
}

// Stop stops the handler's server, if one runs.
func (o *serverOp) Stop() {
	if o.web != nil {
		o.web.Stop()
		o.web = nil
	}
}

// Serving is a kqbench server's running server of the handler (two-host
// mode's server half), with its namespace's counters at start.
type Serving struct {
	srv  web.Server
	do   func(func() error) error
	base Counts
}

// Serve starts transport name's server in the namespace do runs in, on
// address addr, for a client on another host.
func Serve(name string, do func(func() error) error, addr netip.Addr, cfg Config) (*Serving, RemoteServer, error) {
	cfg.ServerAddr, cfg.KeyLog = addr, nil
	srv, err := Listen(name, do, cfg)
	if err != nil {
		return nil, RemoteServer{}, err
	}
	cert, err := Certificate()
	if err != nil {
		srv.Close()
		return nil, RemoteServer{}, err
	}
	ap, err := netip.ParseAddrPort(srv.Addr().String())
	if err != nil {
		srv.Close()
		return nil, RemoteServer{}, err
	}
	return &Serving{srv: srv, do: do, base: ReadCounts(do)}, RemoteServer{Addr: ap, Cert: cert, Settings: srv.Settings()}, nil
}

// Stop stops the server and returns the counters over its life.
func (s *Serving) Stop() (Counts, error) {
	err := s.srv.Close()
	return ReadCounts(s.do).Sub(s.base), err
}

// Remote is a server end that serves the mode's handler on another host.
type Remote interface {
	// ListenWeb starts transport's server of the handler with cfg's
	// window, receive buffer and congestion control.
	ListenWeb(ctx context.Context, transport string, cfg Config) (RemoteServer, error)
	// StopWeb stops it and returns its namespace's counters over its life.
	StopWeb(ctx context.Context) (Counts, error)
}

// remoteOf is the Remote of a server end on another host that answers the
// mode's operations (side.Caller: a kqbench server), false for another.
func remoteOf(s side.ServerSide) (Remote, bool) {
	c, ok := s.(side.Caller)
	return callerRemote{c}, ok
}

// callerRemote is Remote over the control protocol.
type callerRemote struct{ c side.Caller }

// ListenWeb starts a server of the handler on the peer: the row's
// transport with the cell's window, receive buffer and congestion
// control.
func (r callerRemote) ListenWeb(ctx context.Context, transport string, cfg Config) (RemoteServer, error) {
	var a listenAnswer
	if err := r.c.Call(ctx, opListen, listenArgs{Transport: transport, CC: cfg.CC, Window: cfg.Window, UDPRcvBuf: cfg.UDPRcvBuf}, &a); err != nil {
		return RemoteServer{}, err
	}
	if a.Web == nil || !a.Web.Addr.IsValid() || len(a.Web.Cert) == 0 {
		return RemoteServer{}, fmt.Errorf("kqbench server %v: %s: no address or certificate in the answer (is it an older kqbench?)", r.c.PeerAddr(), opListen)
	}
	w := *a.Web
	// The server answers with the address it listens on; the client dials
	// the peer's address it reaches the control channel on.
	w.Addr = netip.AddrPortFrom(r.c.PeerAddr(), w.Addr.Port())
	return w, nil
}

// StopWeb stops the peer's server of the handler and returns its
// namespace's counters over the sample.
func (r callerRemote) StopWeb(ctx context.Context) (Counts, error) {
	var a stopAnswer
	err := r.c.Call(ctx, opStop, nil, &a)
	if a.WebCounts == nil && err != nil {
		return Counts{RcvbufErrors: -1, Retrans: -1}, err
	}
	if a.WebCounts == nil {
		return Counts{RcvbufErrors: -1, Retrans: -1}, errors.Join(err, fmt.Errorf("kqbench server %v: %s: no counters in the answer", r.c.PeerAddr(), opStop))
	}
	return *a.WebCounts, err
}
