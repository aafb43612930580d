package transport

import (
	"time"

	"github.com/quic-go/quic-go"
)

// quicGoConf is kqbench's quic-go configuration: large receive windows
// (autotuned up to their maxima), or o.Window for both when set.
func quicGoConf(o Options) *quic.Config {
	c := &quic.Config{
		MaxIdleTimeout:                 30 * time.Second,
		MaxIncomingStreams:             1000,
		InitialStreamReceiveWindow:     4 << 20,
		MaxStreamReceiveWindow:         16 << 20,
		InitialConnectionReceiveWindow: 8 << 20,
		MaxConnectionReceiveWindow:     64 << 20,
	}
	if w := uint64(o.Window); w > 0 {
		c.InitialStreamReceiveWindow, c.MaxStreamReceiveWindow = w, w
		c.InitialConnectionReceiveWindow, c.MaxConnectionReceiveWindow = w, w
	}
	return c
}
