// Package kcov collects the kernel's code coverage (KCOV) of a module as this
// process's system calls run it, and maps it to the module's functions and
// source lines.
//
// # Collecting (in the guest)
//
// KCOV traces one task per file descriptor: a thread opens
// /sys/kernel/debug/kcov, sizes and maps its buffer (KCOV_INIT_TRACE, mmap)
// and enables it for itself (KCOV_ENABLE); from then on the kernel appends
// the address of every instrumented basic block the thread runs in task
// context. Go moves goroutines between threads, so tracing the thread of one
// goroutine misses the calls its successors make elsewhere. Two things make
// up for it. [Start] traces a pool of threads: it wires as many goroutines
// as it is asked for to threads of their own at once (runtime.LockOSThread,
// each blocked until all are), enables a KCOV descriptor on each, and lets
// them go: the threads return to the scheduler traced, and every goroutine
// that later runs on one of them is traced there. The runtime reuses idle
// threads before it makes new ones, but some threads are not idle while the
// pool is made: the monitor (sysmon), the template thread, and above all
// the network poller's, asleep in epoll_wait, which later runs the
// goroutines the network wakes. So [Tracer.Run] makes a given call on a
// traced thread: it wires the calling goroutine to its thread for the call
// and traces that thread first if it is not yet; kquic.dev/internal/quicsock
// makes every system call on a QUIC socket through its Around hook, which
// the fuzzer sets to Run. [Tracer.Threads] says how many of the process's
// threads are traced.
//
// What task-mode KCOV cannot see: code that runs in softirq, hardirq or a
// kworker. For a network protocol module that is most of the receive path: a
// UDP datagram reaches an encapsulation socket's receive hook in the
// NET_RX softirq (on loopback, the softirq that runs as the sender's
// local_bh_enable returns, still not task context). What reaches the module's
// packet parser in task context is the socket backlog (packets that came
// while a system call held the socket lock, processed by release_sock in that
// call) and what the system calls themselves do (connect, accept, the
// handshake's setsockopt calls that install keys and process the packets held
// until the keys came, sendmsg, recvmsg, close). KCOV_REMOTE_ENABLE would
// collect a softirq's coverage where the kernel marks it with
// kcov_remote_start_common: the network core gives every skb the sender's
// KCOV handle, but only 802.11, Bluetooth and NFC receive paths start remote
// coverage with it, and the QUIC module has no annotation of its own, so
// there is nothing for it to collect here.
//
// # Mapping (on the host, or anywhere)
//
// KCOV records addresses with the kernel's KASLR offset taken away; a
// module's sections are placed elsewhere, so [ModuleLayout] reads where
// /sys/module/NAME/sections put them and the KASLR offset from /proc/kallsyms,
// and [Symbolize] places the module file's sections at those addresses,
// relocates its DWARF there, and maps each address to its function and line.
// The coverable points are the module's calls to __sanitizer_cov_trace_pc
// (one per basic block KCOV instruments, found from the relocations), so the
// report is "reached of coverable" for points, lines and functions.
package kcov
