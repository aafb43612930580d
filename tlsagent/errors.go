package tlsagent

import (
	"errors"
	"fmt"
)

// ErrNotSupported is returned where the kernel has no handshake netlink
// family (CONFIG_NET_HANDSHAKE), or off Linux.
var ErrNotSupported = fmt.Errorf("tlsagent: kernel handshake requests are not supported here: %w", errors.ErrUnsupported)
