//go:build linux

package iouring

import (
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// setupCQSize is IORING_SETUP_CQSIZE: params.cqEntries is the CQ's size.
const setupCQSize = 1 << 3

// Ring is one io_uring instance, used by one goroutine at a time: it
// submits a send and waits for its completion, and counts the buffer
// notifications that follow.
type Ring struct {
	fd     int
	sqMem  []byte
	cqMem  []byte // == sqMem with IORING_FEAT_SINGLE_MMAP
	single bool
	sqeMem []byte

	sqTail, sqMask *uint32
	sqArray        unsafe.Pointer
	cqHead, cqTail *uint32
	cqMask         *uint32
	cqes           unsafe.Pointer

	seq     uint64
	pending int // sends whose notification has not come
	notes   Notes
}

// Notes counts the notifications of IORING_OP_SEND_ZC: the kernel no
// longer uses a send's buffer, and whether it copied the data after all
// (IORING_NOTIF_USAGE_ZC_COPIED).
type Notes struct {
	Done, Copied int64
}

// New makes a ring of sqEntries submission slots and cqEntries completion
// slots (powers of two; cqEntries bounds the notifications a ring holds
// unread).
func New(sqEntries, cqEntries uint32) (*Ring, error) {
	p := params{flags: setupCQSize, cqEntries: cqEntries}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(sqEntries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		err := error(os.NewSyscallError("io_uring_setup", errno))
		switch errno {
		case unix.ENOSYS, unix.EPERM:
			// No io_uring in this kernel, or kernel.io_uring_disabled.
			err = fmt.Errorf("%w: %w (is kernel.io_uring_disabled set?)", ErrNotSupported, err)
		}
		return nil, err
	}
	r := &Ring{fd: int(fd)}
	if err := r.mmap(&p); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Ring) mmap(p *params) error {
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(cqe{})))
	r.single = p.features&featSingleMmap != 0
	if r.single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	if r.sqMem, err = unix.Mmap(r.fd, offSQRing, sqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return fmt.Errorf("io_uring: map the submission ring: %w", os.NewSyscallError("mmap", err))
	}
	r.cqMem = r.sqMem
	if !r.single {
		if r.cqMem, err = unix.Mmap(r.fd, offCQRing, cqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
			r.cqMem = nil
			return fmt.Errorf("io_uring: map the completion ring: %w", os.NewSyscallError("mmap", err))
		}
	}
	if r.sqeMem, err = unix.Mmap(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(sqe{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return fmt.Errorf("io_uring: map the submission entries: %w", os.NewSyscallError("mmap", err))
	}
	sq, cq := unsafe.Pointer(&r.sqMem[0]), unsafe.Pointer(&r.cqMem[0])
	r.sqTail = (*uint32)(unsafe.Add(sq, p.sqOff.tail))
	r.sqMask = (*uint32)(unsafe.Add(sq, p.sqOff.ringMask))
	r.sqArray = unsafe.Add(sq, p.sqOff.array)
	r.cqHead = (*uint32)(unsafe.Add(cq, p.cqOff.head))
	r.cqTail = (*uint32)(unsafe.Add(cq, p.cqOff.tail))
	r.cqMask = (*uint32)(unsafe.Add(cq, p.cqOff.ringMask))
	r.cqes = unsafe.Add(cq, p.cqOff.cqes)
	return nil
}

// Close releases the ring. The kernel keeps the pages of sends still in
// flight until they complete.
func (r *Ring) Close() error {
	if r.sqeMem != nil {
		unix.Munmap(r.sqeMem)
	}
	if r.cqMem != nil && !r.single {
		unix.Munmap(r.cqMem)
	}
	if r.sqMem != nil {
		unix.Munmap(r.sqMem)
	}
	r.sqeMem, r.cqMem, r.sqMem = nil, nil, nil
	if r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
	return nil
}

// Notes returns the notifications read so far.
func (r *Ring) Notes() Notes { return r.notes }

// Pending is how many sends' notifications have not come yet.
func (r *Ring) Pending() int { return r.pending }

// SendZC sends b on the socket fd with IORING_OP_SEND_ZC (msgFlags as
// send(2)'s) and waits for the send's result: the bytes the kernel took,
// or the errno it failed with (unix.Errno, in an *os.SyscallError named
// "io_uring send_zc"). The kernel may still use b after SendZC returns,
// until the send's notification: b must not change until Pending is 0.
func (r *Ring) SendZC(fd int, b []byte, msgFlags uint32) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r.seq++
	tail := atomic.LoadUint32(r.sqTail)
	idx := tail & *r.sqMask
	e := (*sqe)(unsafe.Add(unsafe.Pointer(&r.sqeMem[0]), uintptr(idx)*unsafe.Sizeof(sqe{})))
	*e = sqe{opcode: opSendZC, ioprio: sendZCReportUsage, fd: int32(fd),
		addr: uint64(uintptr(unsafe.Pointer(&b[0]))), len: uint32(len(b)), msgFlags: msgFlags, userData: r.seq}
	*(*uint32)(unsafe.Add(r.sqArray, uintptr(idx)*4)) = idx
	atomic.StoreUint32(r.sqTail, tail+1)
	submit := uint32(1)
	for {
		_, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(submit), 1, enterGetEvents, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return 0, os.NewSyscallError("io_uring_enter", errno)
		}
		submit = 0
		if res, ok := r.reap(r.seq); ok {
			if res < 0 {
				return 0, os.NewSyscallError("io_uring send_zc", unix.Errno(-res))
			}
			return int(res), nil
		}
	}
}

// Wait waits until at most max notifications are pending.
func (r *Ring) Wait(max int) error {
	for r.pending > max {
		_, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), 0, 1, enterGetEvents, 0, 0)
		if errno != 0 && errno != unix.EINTR {
			return os.NewSyscallError("io_uring_enter", errno)
		}
		r.reap(0)
	}
	return nil
}

// reap reads every completion there is: notifications are counted, and
// the result of send seq (0: none) is returned with ok.
func (r *Ring) reap(seq uint64) (res int32, ok bool) {
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail)
	for ; head != tail; head++ {
		c := *(*cqe)(unsafe.Add(r.cqes, uintptr(head&*r.cqMask)*unsafe.Sizeof(cqe{})))
		switch {
		case c.flags&cqeFNotif != 0:
			r.pending--
			r.notes.Done++
			if uint32(c.res)&notifUsageCopied != 0 {
				r.notes.Copied++
			}
		default:
			if c.flags&cqeFMore != 0 {
				r.pending++
			}
			if c.userData == seq {
				res, ok = c.res, true
			}
		}
	}
	atomic.StoreUint32(r.cqHead, head)
	return res, ok
}
