//go:build linux && (kquic || !nokquic)

package quicnet_test

import (
	"testing"

	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/quicsock"
	"kquic.dev/quicnet"
)

// TestStreamDataNoDelay checks that the kernel has stream_data_nodelay on
// for both ends of a connection, dialed and accepted (the accepted socket
// inherits the listener's config): quic-go sends a write at once, and
// without it the kernel holds a write smaller than a packet until every
// ack-eliciting packet in flight is acknowledged, which cost a fresh
// HTTP/3 connection two round trips more than quic-go (the client's
// request waited for the ACK of its NEW_CONNECTION_ID frames, the response
// for the delayed ACK of the server's SETTINGS).
func TestStreamDataNoDelay(t *testing.T) {
	requireImplOf(t, quicnet.Kernel)
	conf := &quicnet.Config{Implementation: quicnet.Kernel}
	cli, srv := newPair(t, conf, conf)
	for name, c := range map[string]*quicnet.Conn{"dialed": cli, "accepted": srv} {
		sock, err := quicsock.FromConn(quicnet.KquicConn(c))
		if err != nil {
			t.Fatalf("%s connection's socket: %v", name, err)
		}
		b, err := sock.GetOption(quicabi.QUIC_SOCKOPT_CONFIG, make([]byte, quicabi.SizeofConfig))
		if err != nil {
			t.Fatalf("%s connection: getsockopt QUIC_SOCKOPT_CONFIG: %v", name, err)
		}
		cfg, err := quicabi.UnmarshalConfig(b)
		if err != nil {
			t.Fatalf("%s connection: %v", name, err)
		}
		if !cfg.StreamDataNodelay {
			t.Errorf("%s connection: the kernel's stream_data_nodelay is off: small writes wait for ACKs (set kquic.Config.StreamDataNoDelay in kquicConfig)", name)
		}
	}
}
