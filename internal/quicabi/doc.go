// Package quicabi holds the userspace ABI of the Linux kernel QUIC module
// (github.com/lxin/quic): protocol and level numbers, socket options,
// control-message types, message flags, enums, the binary layout of every
// struct passed through setsockopt/getsockopt or a control message, and the
// format of event notifications.
//
// It is the one place in kquic.dev where those numbers and layouts are
// written down; the socket bindings (kquic) and the TLS handshake driver
// (handshake) use it rather than repeating them.
//
// The authority is the module's UAPI header, include/uapi/linux/quic.h, at
// the module commit the project tests against (currently
// 03a9c7cdb2d52f3c88e2003d7aa94eb8ec31b7ad). Where this package and the
// header disagree, the header is right. The tests pin the size of every
// struct and the offset of every field, and, when a copy of the header is
// available (it is not committed here), parse it and compare its numbers and
// struct layouts with this package, so that a change in the module shows up
// as a test failure rather than as a corrupted socket option.
//
// Structs are encoded and decoded field by field at explicit offsets, never
// by casting memory. Multi-byte fields use the host byte order, which is what
// the kernel uses (little endian on every architecture the project targets).
// Reserved and padding bytes are written as zero and ignored when read.
//
// The numbers and their names (const.go) build on every platform, so that
// the packages above print a value the same way everywhere; the struct
// layouts, events, control messages and message flags are Linux's
// (the _linux.go files).
package quicabi
