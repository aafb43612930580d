package web

import (
	"context"
	"fmt"
	"math"
	"net"
)

// Config is what a run asks of the HTTP layer at both ends. A zero field
// keeps each implementation's default, which Settings then names.
type Config struct {
	// StreamWindow is the flow-control window an end grants per stream
	// (bytes): what the peer may send on one stream unacknowledged. It caps
	// a download's goodput at StreamWindow/RTT.
	StreamWindow int64
	// ConnWindow is the same per connection, over all its streams.
	ConnWindow int64
	// MaxStreams is how many concurrent streams a server lets a client
	// open.
	MaxStreams int64
	// UDPRcvBuf is the SO_RCVBUF asked of each UDP socket (HTTP/3); zero
	// keeps what quic-go asks for itself (7 MiB, forced as root).
	UDPRcvBuf int

	// DialTCP, when set, opens the client's TCP connections (inside a
	// network namespace, say); nil uses a net.Dialer.
	DialTCP func(ctx context.Context, network, address string) (net.Conn, error)
	// ListenUDP, when set, opens the UDP socket of each client connection
	// over QUIC; nil uses net.ListenUDP("udp", nil).
	ListenUDP func() (*net.UDPConn, error)
}

// HTTP/2's limits (RFC 9113 6.9.1, 6.9.2): windows are 31-bit, and the
// connection's starts at 65535.
const (
	h2MaxWindow     = math.MaxInt32
	h2InitialWindow = 65535
)

// check rejects what an implementation would not take, rather than let it
// fall back to a default silently.
func (c Config) check(protocol string) error {
	if c.StreamWindow < 0 || c.ConnWindow < 0 || c.MaxStreams < 0 || c.UDPRcvBuf < 0 {
		return fmt.Errorf("web: stream window %d, connection window %d, max streams %d, UDP receive buffer %d: windows, stream counts and buffers must not be negative", c.StreamWindow, c.ConnWindow, c.MaxStreams, c.UDPRcvBuf)
	}
	if protocol == "h2" {
		if c.StreamWindow > h2MaxWindow || c.ConnWindow > h2MaxWindow {
			return fmt.Errorf("web: HTTP/2 windows are at most %d bytes (31 bits), asked stream %d, connection %d", h2MaxWindow, c.StreamWindow, c.ConnWindow)
		}
		if c.ConnWindow != 0 && c.ConnWindow < h2InitialWindow {
			return fmt.Errorf("web: an HTTP/2 connection window starts at %d bytes and cannot shrink: asked %d", h2InitialWindow, c.ConnWindow)
		}
		if c.MaxStreams > math.MaxUint32 {
			return fmt.Errorf("web: HTTP/2 max concurrent streams is a 32-bit count, asked %d", c.MaxStreams)
		}
	}
	return nil
}

// Settings are the HTTP-layer settings in force at one end, as that end
// applied them: what a brake (a window capping goodput at window/RTT, a
// receive buffer dropping datagrams) is explained with.
type Settings struct {
	// Protocol is "h2" or "h3"; Stack what it runs on ("crypto/tls",
	// "ktls", "quic-go", or a hooked implementation's name).
	Protocol string `json:"protocol"`
	Stack    string `json:"stack"`
	// StreamWindow and ConnWindow are the receive flow-control windows
	// this end grants, per stream and per connection, in bytes; with
	// Autotuned they start at InitialStreamWindow and grow up to these.
	StreamWindow        int64 `json:"stream_window"`
	ConnWindow          int64 `json:"conn_window"`
	Autotuned           bool  `json:"autotuned,omitempty"`
	InitialStreamWindow int64 `json:"initial_stream_window,omitempty"`
	// MaxStreams is how many concurrent streams this end lets its peer
	// open (0 on clients: the server opens none).
	MaxStreams int64 `json:"max_streams"`
	// UDPRcvBufAsked is the SO_RCVBUF asked of the UDP socket and
	// UDPRcvBufGranted what the kernel reports (Linux doubles the ask and,
	// unless forced as root, caps it at net.core.rmem_max); 0 where there
	// is none or it cannot be read.
	UDPRcvBufAsked   int `json:"udp_rcvbuf_asked,omitempty"`
	UDPRcvBufGranted int `json:"udp_rcvbuf_granted,omitempty"`
	// Notes says where each value comes from.
	Notes []string `json:"notes,omitempty"`
}

func orDefault(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}
