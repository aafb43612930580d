// Package quicsock wraps a kernel QUIC socket (IPPROTO_QUIC) for the rest of
// kquic: the descriptor is non-blocking and lives in Go's runtime poller, so
// waiting for it parks a goroutine, not a thread, and Close wakes every waiter.
// It offers the system calls the bindings need (bind, connect, listen, accept,
// sendmsg and recvmsg with QUIC control messages, and raw get/setsockopt at
// SOL_QUIC) and nothing more; the meaning lives in packages kquic and
// handshake.
//
// The module checks for pending signals before it checks for MSG_DONTWAIT,
// so even non-blocking calls fail with EINTR when one of Go's preemption
// signals (SIGURG) is pending; every call here retries on EINTR.
package quicsock

import (
	"errors"
	"fmt"
)

// ErrNotSupported is wrapped by the error of [New] when the kernel cannot
// open QUIC sockets (no QUIC module: EPROTONOSUPPORT, or the family is off:
// EAFNOSUPPORT); the errno stays reachable with errors.Is. It is the one
// sentinel of package kquic on every platform (kquic.ErrNotSupported), so it
// is the one file of this package that builds off Linux.
var ErrNotSupported = fmt.Errorf("kernel QUIC is not supported here: %w", errors.ErrUnsupported)
