//go:build unix

package interop

import (
	"sync"
	"syscall"
)

// keepOpenFileLimit makes the programs the runner starts (ngtcp2's,
// http3_test) inherit this process's limit on open files, which the Go
// runtime raised to the hard limit at start, instead of the original soft
// limit it gives child processes back (1024 in the guest): ngtcp2's server
// keeps a file open per request for the connection's life, and
// multiplexing's 2000 requests over one connection then got 404 Not Found
// from the 1018th on. The runner's containers run with a high limit too.
// Setting the limit, to what it is, is what turns the giving back off.
var keepOpenFileLimit = sync.OnceFunc(func() {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r) == nil {
		r.Cur = r.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r)
	}
})
