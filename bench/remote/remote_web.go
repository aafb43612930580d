//go:build linux

package remote

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"kquic.dev/bench/mode/h3"
)

// handleWeb starts (web-listen) or stops (web-stop) the server of the h3
// mode's handler on the server's device.
func (x *session) handleWeb(q request) response {
	switch q.Op {
	case opWebListen:
		x.stopWeb()
		srv, info, err := h3.Serve(q.Transport, x.s.dev.Do, x.addr, h3.Config{Window: q.Window, UDPRcvBuf: q.UDPRcvBuf, CC: q.CC})
		if err != nil {
			return response{Error: fmt.Sprintf("%s: %v", q.Transport, err)}
		}
		x.web = srv
		return response{Web: &info}
	default: // opWebStop
		if x.web == nil {
			return response{Error: "web-stop: no server of the handler is running (send web-listen first)"}
		}
		counts, err := x.web.Stop()
		x.web = nil
		if err != nil {
			return response{Error: err.Error(), WebCounts: &counts}
		}
		return response{WebCounts: &counts}
	}
}

// stopWeb stops the handler's server, if one runs.
func (x *session) stopWeb() {
	if x.web != nil {
		x.web.Stop()
		x.web = nil
	}
}

var _ h3.Remote = (*Client)(nil)

// ListenWeb starts a server of the h3 mode's handler on the peer: the
// row's transport with the cell's window, receive buffer and congestion
// control.
func (c *Client) ListenWeb(ctx context.Context, transport string, cfg h3.Config) (h3.RemoteServer, error) {
	r, err := c.call(ctx, request{Op: opWebListen, Transport: transport, CC: cfg.CC, Window: cfg.Window, UDPRcvBuf: cfg.UDPRcvBuf})
	if err != nil {
		return h3.RemoteServer{}, err
	}
	if r.Web == nil || !r.Web.Addr.IsValid() || len(r.Web.Cert) == 0 {
		return h3.RemoteServer{}, fmt.Errorf("kqbench server %s: web-listen: no address or certificate in the answer (is it an older kqbench?)", c.addr)
	}
	w := *r.Web
	// The server answers with the address it listens on; the client dials
	// the peer's address it reaches the control channel on.
	w.Addr = netip.AddrPortFrom(c.peer, w.Addr.Port())
	return w, nil
}

// StopWeb stops the peer's server of the handler and returns its
// namespace's counters over the sample.
func (c *Client) StopWeb(ctx context.Context) (h3.Counts, error) {
	r, err := c.call(ctx, request{Op: opWebStop})
	if r.WebCounts == nil && err != nil {
		return h3.Counts{RcvbufErrors: -1, Retrans: -1}, err
	}
	if r.WebCounts == nil {
		return h3.Counts{RcvbufErrors: -1, Retrans: -1}, errors.Join(err, fmt.Errorf("kqbench server %s: web-stop: no counters in the answer", c.addr))
	}
	return *r.WebCounts, err
}
