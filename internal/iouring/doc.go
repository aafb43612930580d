// Package iouring is the little of io_uring (include/uapi/linux/io_uring.h)
// that kqbench's uring-zc send method needs: a ring of its own per sender,
// IORING_OP_SEND_ZC submitted and its two completions (the send's result,
// then the notification that the kernel is done with the buffer, saying
// whether it copied after all) read back. No maintained Go io_uring
// library could be had from the module proxy this project builds from
// (issue 36), so the ABI is here, in one reviewed place (abi_linux.go),
// with tests that pin its sizes and offsets to the header's.
//
// On other systems, and where the kernel has no io_uring or refuses it
// (kernel.io_uring_disabled), New returns an error that matches
// ErrNotSupported.
package iouring

import "errors"

// ErrNotSupported is matched (errors.Is) by the error of New where the
// system or the kernel has no io_uring for this process.
var ErrNotSupported = errors.New("io_uring is not supported here")
