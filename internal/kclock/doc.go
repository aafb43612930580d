// Package kclock places a Go time on the kernel's clocks: CLOCK_MONOTONIC,
// on which eBPF programs (bpf_ktime_get_ns) and perf stamp events, and
// CLOCK_REALTIME, on which the kernel stamps packets (SO_TIMESTAMPNS).
//
// The obvious conversion, a clock_gettime plus time.Until(at), reads two
// clocks one after the other, and a process descheduled between the two
// reads (the system call's return is a point where the scheduler runs it
// down; a hypervisor can stop the vCPU anywhere) is off by as long as it
// waited: on a loaded 2-core guest, tens of milliseconds, which moved a
// measurement window's edge by 12% of its length. kclock brackets the
// kernel's reading between two of Go's and retries until the bracket is
// tight, so the error is at most half the tightest bracket it found, and
// says what that is.
package kclock
