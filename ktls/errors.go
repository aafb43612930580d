package ktls

import (
	"crypto/tls"
	"errors"
	"fmt"
)

var (
	// ErrNoKernelTLS means the kernel cannot do TLS on this socket: the "tls"
	// TCP upper layer protocol is missing (no CONFIG_TLS, tls.ko not loaded
	// and not loadable). Load the module (`modprobe tls`) or set
	// Config.Fallback to continue in userspace.
	ErrNoKernelTLS = errors.New("kernel TLS unavailable")

	// ErrUnsupportedCipher means the negotiated version or cipher suite is
	// one the kernel (or this package) cannot take: only TLS 1.2 and 1.3 with
	// AES-128-GCM, AES-256-GCM or ChaCha20-Poly1305 are handed over.
	ErrUnsupportedCipher = errors.New("cipher suite not supported by kernel TLS")

	// ErrKeyUpdateUnsupported means a TLS 1.3 KeyUpdate was needed (the peer
	// sent one, or KeyUpdate was called) but the kernel cannot replace keys
	// on a kTLS socket (rekeying arrived in Linux 6.14). The connection
	// cannot continue; use a newer kernel, or Config.Fallback with a kernel
	// that lacks kTLS altogether.
	ErrKeyUpdateUnsupported = errors.New("kernel TLS cannot rekey (TLS 1.3 KeyUpdate needs Linux 6.14 or later)")

	// ErrUnexpectedMessage means the peer sent a post-handshake message this
	// package does not handle (such as a post-handshake CertificateRequest or
	// a ChangeCipherSpec); the connection is unusable.
	ErrUnexpectedMessage = errors.New("unexpected TLS message after the handshake")
)

// AlertError is a TLS alert other than close_notify received from the peer,
// after which the connection cannot be read.
type AlertError struct {
	// Level is 1 for warning, 2 for fatal.
	Level uint8
	// Description is the alert's code (RFC 8446 section 6), for example 40
	// for handshake_failure, 20 for bad_record_mac.
	Description uint8
}

// Error names the alert.
func (e *AlertError) Error() string {
	level := "fatal"
	if e.Level == 1 {
		level = "warning"
	}
	return fmt.Sprintf("ktls: peer sent %s alert %d (%s)", level, e.Description, tls.AlertError(e.Description).Error())
}

// KernelError reports a step of the switch to kernel TLS that the kernel
// refused. It unwraps both to a sentinel (ErrNoKernelTLS,
// ErrUnsupportedCipher, ErrKeyUpdateUnsupported) when one applies and to the
// errno.
type KernelError struct {
	// Op is the failed step, for example `setsockopt(SOL_TLS, TLS_TX)`.
	Op string
	// Suite and Version name what was being installed.
	Suite, Version uint16
	// Err is the system error.
	Err error
	// Kind is the sentinel, or nil.
	Kind error
	// Hint says what to do.
	Hint string
}

// Error says which step failed, why, and what to do.
func (e *KernelError) Error() string {
	s := "ktls: " + e.Op
	if e.Suite != 0 {
		s += fmt.Sprintf(" (%s, %s)", tls.VersionName(e.Version), tls.CipherSuiteName(e.Suite))
	}
	s += ": " + e.Err.Error()
	if e.Kind != nil {
		s += ": " + e.Kind.Error()
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// Unwrap returns the sentinel and the system error.
func (e *KernelError) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.Err}
	}
	return []error{e.Kind, e.Err}
}

// ErrNotSupported is returned where kernel TLS cannot be used: the platform
// is not Linux (Client, Server and Dial return an error matching it, and
// ErrNoKernelTLS too), or the kernel lacks the feature (on Linux that error
// matches ErrNoKernelTLS, ErrUnsupportedCipher or ErrKeyUpdateUnsupported,
// which say which).
var ErrNotSupported = fmt.Errorf("ktls: kernel TLS is not supported here: %w", errors.ErrUnsupported)
