// Package kquic is the Go interface to the Linux kernel QUIC module
// (lxin/quic, IPPROTO_QUIC sockets): dialing and listening, streams as
// io.ReadWriteClosers, datagrams (RFC 9221), the kernel's events, transport
// parameters, key update, connection migration, connection IDs, address
// validation tokens, session resumption and 0-RTT, and close codes, with no
// cgo.
//
// The kernel carries the QUIC protocol; the TLS 1.3 handshake runs in this
// process with crypto/tls (package kquic.dev/handshake), so [Dial] and
// [Listener.Accept] return connections whose handshake has completed.
//
// Each socket lives in Go's runtime poller (non-blocking, syscall.RawConn):
// thousands of connections do not pin thousands of threads, and Close wakes
// every goroutine waiting on a connection. A socket delivers everything on
// one descriptor, so one goroutine at a time receives and hands out what is
// not its own: a Stream.Read with nothing buffered receives itself, and the
// kernel copies its stream's data straight into the caller's buffer; while
// no Read waits, the connection's own goroutine receives, so that datagrams,
// events, new streams and the peer's close are seen all the same.
//
// A Stream.Write is one sendmsg: the kernel packs, encrypts and sends. A
// write that finds the socket's buffer full waits in the poller, woken by the
// kernel as a blocking sendmsg would be; one held back by the peer's flow
// control waits for the kernel's MAX_STREAM_DATA event. A deadline on one
// write fails no other (see writewait.go).
// A goroutine that streams bulk data spends nearly all its time in that
// call and, the kernel's buffer rarely full, never blocks: the runtime then
// preempts it every 10ms (forcePreemptNS), and its sysmon thread wakes
// hundreds of times a second. Locking the goroutine to its thread
// (runtime.LockOSThread) for the transfer keeps it from resuming on another
// thread after each preemption, which kquic.dev/bench/perftest measured at
// about 4% of throughput with 1 KiB writes. The rest is the runtime's: under
// emulation, with those two constants relaxed in a patched runtime (and
// nothing else changed), a Go client kept up with the module's C perf_test
// (see the README's status section).
//
// A Listener bounds what strangers can make it hold: at most
// Config.MaxHandshakes handshakes at a time and Config.AcceptQueue
// connections waiting for Accept; beyond that it leaves new connections in
// the kernel's queue, which refuses the excess with CONNECTION_REFUSED. A
// connection holds at most Config.DatagramQueue received datagrams and
// Config.EventQueue events not yet received; past them new ones are dropped
// and counted ([Conn.DatagramsDropped], [Conn.EventsDropped]). Failed
// handshakes go to Config.Logger.
//
// Errors follow package net and quic-go: every way a connection ends - our
// close, the peer's ([*CloseError], which tells an application's close from
// a transport error by the frame the peer sent), the idle timeout
// ([*IdleTimeoutError]), a failed handshake - matches net.ErrClosed with
// errors.Is; failed system calls come as a *net.OpError with the operation
// and addresses, the errno reachable with errors.Is; and where the kernel
// has no QUIC module, or the platform is not Linux, the error matches
// [ErrNotSupported].
//
// Error codes have one type per kind, as in quic-go: [ApplicationErrorCode]
// for [Conn.CloseWithError], [StreamErrorCode] for [Stream.CancelRead] and
// [Stream.CancelWrite], [TransportErrorCode] (with its RFC names) for the
// transport's closes. QUIC's codes have 62 bits, the kernel's ABI 32: a code
// above [MaxErrorCode] is refused with an error matching [ErrCodeTooLarge]
// and nothing is sent; a peer's wider code arrives cut to 32 bits by the
// kernel.
//
// Configuration follows the kernel's rules: a zero field means the kernel's
// default, a value outside what the kernel accepts is an error, and values
// set are read back so that none is silently ignored.
//
// The module's ABI (constants, struct layouts, control messages, events)
// is in kquic.dev/internal/quicabi, pinned by tests.
//
// The package builds on every platform. Its values (Config,
// TransportParameters, the errors, events and codes) are declared once, in
// files without a build tag, and print the same everywhere; the system
// calls and ABI conversions are in the _linux.go files. Off Linux the entry
// points fail with an error matching [ErrNotSupported] (kquic_other.go).
package kquic
