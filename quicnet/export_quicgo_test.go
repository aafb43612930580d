//go:build !kquic || !linux

package quicnet

import "github.com/quic-go/quic-go"

// QuicgoReceiveStream is quic-go's stream under s (of a QuicGo
// connection), for tests that look at what arrived without reading it.
func QuicgoReceiveStream(s *ReceiveStream) *quic.ReceiveStream { return s.impl.(goRecvStream).s }
