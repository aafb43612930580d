//go:build linux

package iouring

import (
	"testing"
	"unsafe"
)

// The sizes and offsets of include/uapi/linux/io_uring.h (offsetof in C
// against Debian's linux-libc-dev header).
func TestABI(t *testing.T) {
	var p params
	var s sqe
	var c cqe
	for _, tc := range []struct {
		name      string
		got, want uintptr
	}{
		{"sizeof(struct io_uring_params)", unsafe.Sizeof(p), 120},
		{"offsetof(io_uring_params, features)", unsafe.Offsetof(p.features), 20},
		{"offsetof(io_uring_params, sq_off)", unsafe.Offsetof(p.sqOff), 40},
		{"offsetof(io_uring_params, cq_off)", unsafe.Offsetof(p.cqOff), 80},
		{"sizeof(struct io_sqring_offsets)", unsafe.Sizeof(p.sqOff), 40},
		{"sizeof(struct io_cqring_offsets)", unsafe.Sizeof(p.cqOff), 40},
		{"sizeof(struct io_uring_sqe)", unsafe.Sizeof(s), 64},
		{"offsetof(io_uring_sqe, fd)", unsafe.Offsetof(s.fd), 4},
		{"offsetof(io_uring_sqe, off)", unsafe.Offsetof(s.off), 8},
		{"offsetof(io_uring_sqe, addr)", unsafe.Offsetof(s.addr), 16},
		{"offsetof(io_uring_sqe, len)", unsafe.Offsetof(s.len), 24},
		{"offsetof(io_uring_sqe, msg_flags)", unsafe.Offsetof(s.msgFlags), 28},
		{"offsetof(io_uring_sqe, user_data)", unsafe.Offsetof(s.userData), 32},
		{"offsetof(io_uring_sqe, buf_index)", unsafe.Offsetof(s.bufIndex), 40},
		{"offsetof(io_uring_sqe, addr3)", unsafe.Offsetof(s.addr3), 48},
		{"sizeof(struct io_uring_cqe)", unsafe.Sizeof(c), 16},
		{"offsetof(io_uring_cqe, res)", unsafe.Offsetof(c.res), 8},
		{"offsetof(io_uring_cqe, flags)", unsafe.Offsetof(c.flags), 12},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}
