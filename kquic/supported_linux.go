package kquic

import (
	"errors"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/quicsock"
)

// Supported reports whether this kernel opens IPPROTO_QUIC sockets: nil
// where it does, else why not, an error matching [ErrNotSupported] where
// the QUIC module is not loaded. It opens and closes one socket (IPv4, or
// IPv6 on a kernel without IPv4).
func Supported() error {
	s, err := quicsock.New(unix.AF_INET)
	if err != nil && errors.Is(err, unix.EAFNOSUPPORT) {
		s, err = quicsock.New(unix.AF_INET6)
	}
	if err != nil {
		return err
	}
	return s.Close()
}
