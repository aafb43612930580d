//go:build linux

package counters

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// syscallNames are the syscalls reported by name (always, zero included);
// others count in the total and under "nr_<number>" in EndResult.Syscalls.
// The numbers come from x/sys/unix, so they are right for each GOARCH.
var syscallNames = map[string]uint32{
	"read":        unix.SYS_READ,
	"write":       unix.SYS_WRITE,
	"readv":       unix.SYS_READV,
	"writev":      unix.SYS_WRITEV,
	"sendto":      unix.SYS_SENDTO,
	"recvfrom":    unix.SYS_RECVFROM,
	"sendmsg":     unix.SYS_SENDMSG,
	"recvmsg":     unix.SYS_RECVMSG,
	"sendmmsg":    unix.SYS_SENDMMSG,
	"recvmmsg":    unix.SYS_RECVMMSG,
	"sendfile":    unix.SYS_SENDFILE,
	"splice":      unix.SYS_SPLICE,
	"epoll_pwait": unix.SYS_EPOLL_PWAIT,
	"futex":       unix.SYS_FUTEX,
	"getsockopt":  unix.SYS_GETSOCKOPT,
	"setsockopt":  unix.SYS_SETSOCKOPT,
}

// byteSyscalls are the named syscalls whose return value is a count of
// bytes (read, sent, received), so that the bytes they returned mean
// something; sendmmsg and recvmmsg return messages, epoll_pwait events.
var byteSyscalls = map[string]bool{
	"read": true, "write": true, "readv": true, "writev": true,
	"sendto": true, "recvfrom": true, "sendmsg": true, "recvmsg": true,
	"sendfile": true, "splice": true,
}

var syscallByNr = func() map[uint32]string {
	m := map[uint32]string{}
	for k, v := range syscallNames {
		m[v] = k
	}
	return m
}()

func syscallName(nr uint32) string {
	if n, ok := syscallByNr[nr]; ok {
		return n
	}
	return fmt.Sprintf("nr_%d", nr)
}
