package handshake

import (
	"errors"
	"fmt"
)

// ErrNotSupported is returned where kernel QUIC cannot be used: the platform
// is not Linux (Client, ClientEarly and Server return an error matching it),
// or the kernel lacks the feature.
var ErrNotSupported = fmt.Errorf("handshake: kernel QUIC is not supported here: %w", errors.ErrUnsupported)
