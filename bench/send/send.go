// Package send is how a bulk sender hands its messages to the kernel: the
// send methods of kqbench matrix --send (write, sendfile, zerocopy,
// uring-zc), which transports have each and why the others do not, and
// the counters a method keeps. The names and reasons build on every
// platform; the senders (send_linux.go) are Linux's.
package send

import (
	"fmt"
	"strings"
	"sync"

	"kquic.dev/internal/iouring"
)

// The send methods.
const (
	// Write is the transport's own Write (write(2)/sendmsg(2), a copy into
	// the socket's buffer): what every cell did before there was a choice.
	Write = "write"
	// Sendfile is sendfile(2) from a memory file holding the message: the
	// kernel takes the file's pages instead of copying from user memory.
	Sendfile = "sendfile"
	// ZeroCopy is send(2) with MSG_ZEROCOPY on a socket with SO_ZEROCOPY
	// set: the kernel pins the user pages and reports on the socket's
	// error queue when it is done with them, and whether it copied after
	// all (SO_EE_CODE_ZEROCOPY_COPIED).
	ZeroCopy = "zerocopy"
	// UringZC is io_uring's IORING_OP_SEND_ZC (kernel 6.0 on): the same
	// pinned pages and notifications as MSG_ZEROCOPY, by a ring instead of
	// the socket's error queue (internal/iouring).
	UringZC = "uring-zc"
)

// Methods are the send methods, in the order tables list them.
var Methods = []string{Write, Sendfile, ZeroCopy, UringZC}

// Check says why m is not a send method, or nil.
func Check(m string) error {
	for _, k := range Methods {
		if m == k {
			return nil
		}
	}
	return fmt.Errorf("send method %q: use %s", m, strings.Join(Methods, ", "))
}

// The kernel's refusals of uring-zc, tried in the guest
// (TestKernelTLSSendMethods, TestKernelQUICRefusesSendMethods).
const (
	ktlsUringZC  = "the kernel refuses IORING_OP_SEND_ZC on a kernel TLS socket (EOPNOTSUPP, as it refuses MSG_ZEROCOPY there); tried in the guest"
	kquicUringZC = "the kernel refuses IORING_OP_SEND_ZC on a QUIC socket (EOPNOTSUPP: io_uring sends zero-copy only on sockets marked SOCK_SUPPORT_ZC, TCP's and UDP's); tried in the guest"
)

// uringNA says why this process has no io_uring ("" when it has): no
// io_uring in the kernel, or kernel.io_uring_disabled. Asked once.
var uringNA = sync.OnceValue(func() string {
	r, err := iouring.New(1, 2)
	if err != nil {
		return "uring-zc: " + err.Error()
	}
	r.Close()
	return ""
})

// userspace is why a userspace stack's cells have no method but write.
const userspace = "quic-go is a userspace stack: its streams are no sockets, and it copies every write into packets of its own"

// NA says why transport t has no send method m ("" when it has it), by
// name: the kernel's or the stack's refusal.
func NA(t, m string) string {
	if m == Write || m == "" {
		return ""
	}
	if t == "quic-go" {
		return m + ": " + userspace
	}
	switch m {
	case Sendfile:
		switch t {
		case "tcp", "ktls":
			return ""
		case "kquic":
			return "sendfile: the QUIC module's sendmsg refuses MSG_SPLICE_PAGES, which sendfile(2) passes on (EINVAL: the flag is not in QUIC_MSG_FLAGS of lxin/quic's socket.c; tried in the guest)"
		}
	case UringZC:
		switch t {
		case "tcp":
			return uringNA()
		case "ktls":
			return "uring-zc: " + ktlsUringZC
		case "kquic":
			return "uring-zc: " + kquicUringZC
		}
	case ZeroCopy:
		switch t {
		case "tcp":
			return ""
		case "ktls":
			return "zerocopy: kernel TLS's sendmsg refuses MSG_ZEROCOPY (EOPNOTSUPP: tls_sw_sendmsg takes no such flag; tried in the guest)"
		case "kquic":
			return "zerocopy: the kernel refuses SO_ZEROCOPY on a QUIC socket (EOPNOTSUPP: only TCP, UDP and RDS sockets take it) and the QUIC module's sendmsg refuses MSG_ZEROCOPY (EINVAL: the flag is not in QUIC_MSG_FLAGS of lxin/quic's socket.c); tried in the guest"
		}
	}
	return fmt.Sprintf("%s: %s has no such send method", m, t)
}

// The counters a sender keeps, as results.Sample.Counters names them (the
// client end's: the bulk sender of an upward cell).
const (
	CounterCalls  = "client.send.calls"    // system calls that sent (sendfile, send)
	CounterBytes  = "client.send.bytes"    // bytes they sent
	CounterZCSent = "client.send.zc_sends" // MSG_ZEROCOPY or SEND_ZC sends the kernel took
	// CounterZCDone counts the MSG_ZEROCOPY sends whose completion the
	// error queue reported, and CounterZCCopied those of them the kernel
	// marked SO_EE_CODE_ZEROCOPY_COPIED: it copied the data after all.
	CounterZCDone   = "client.send.zc_completions"
	CounterZCCopied = "client.send.zc_copied"
)

// CopiedNote is what a zerocopy cell's figure means where the packets are
// delivered on this host (veth, loopback): the kernel copies every such
// send (skb_orphan_frags_rx), so the method costs its bookkeeping and
// saves no copy.
const CopiedNote = "MSG_ZEROCOPY and io_uring SEND_ZC over a veth pair or loopback: the kernel copies every send it delivers on this host (completions marked SO_EE_CODE_ZEROCOPY_COPIED, notifications IORING_NOTIF_USAGE_ZC_COPIED), so the figure is of the method's bookkeeping, not of saved copies; a NIC is needed for real zero copy"
