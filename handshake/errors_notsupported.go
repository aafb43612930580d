package handshake

import "errors"

// ErrNotSupported is returned where kernel QUIC cannot be used: the platform
// is not Linux (Client, ClientEarly and Server return an error matching it),
// or the kernel lacks the feature.
var ErrNotSupported = errors.New("handshake: kernel QUIC is not supported here")
