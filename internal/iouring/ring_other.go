//go:build !linux

package iouring

// Ring is an io_uring instance: Linux only.
type Ring struct{}

// Notes counts the notifications of IORING_OP_SEND_ZC.
type Notes struct{ Done, Copied int64 }

// New returns ErrNotSupported: io_uring is Linux's.
func New(sqEntries, cqEntries uint32) (*Ring, error) { return nil, ErrNotSupported }

// Close does nothing.
func (*Ring) Close() error { return nil }

// Notes returns none.
func (*Ring) Notes() Notes { return Notes{} }

// Pending is 0.
func (*Ring) Pending() int { return 0 }

// SendZC returns ErrNotSupported.
func (*Ring) SendZC(fd int, b []byte, msgFlags uint32) (int, error) { return 0, ErrNotSupported }

// Wait does nothing.
func (*Ring) Wait(max int) error { return nil }
