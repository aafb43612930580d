package ktls

import (
	"errors"
	"fmt"
)

// ErrNotSupported is returned where kernel TLS cannot be used: the platform
// is not Linux (Client, Server and Dial return an error matching it, and
// ErrNoKernelTLS too), or the kernel lacks the feature (on Linux that error
// matches ErrNoKernelTLS, ErrUnsupportedCipher or ErrKeyUpdateUnsupported,
// which say which).
var ErrNotSupported = fmt.Errorf("ktls: kernel TLS is not supported here: %w", errors.ErrUnsupported)
