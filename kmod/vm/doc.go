//go:build linux

// Package vm boots a Linux kernel under qemu and runs one command inside it,
// as if it ran on the host: the host's root file system is shared read-only
// over 9p, so the command, its working directory and its environment are the
// same; its standard output and error stream back to the host; its exit status
// is the result; and directories named as shares are writable in both
// directions, which is how result files come back.
//
// It exists because the features kquic is about (the QUIC module, kernel TLS,
// netem) need a kernel that the development machine may not have or may not be
// allowed to change. With `kqbench vm` as `go test -exec`, a test binary runs in
// the guest without knowing it:
//
//	go test -exec 'kqbench vm --load tls,sch_netem --' ./ktls/
//
// The guest then lives as long as the test binary's -test.timeout allows
// (go test's -timeout, plus [BootMargin]; see [TimeoutFor]), so a test that
// hangs is reported by the testing package, with its name, not by the
// harness.
//
// The guest's init is a Go binary that calls [GuestMain] when [IsGuestInit]
// is true (kqbench does), static or dynamically linked: a dynamic one (a
// kqbench built with cgo, `go build`'s default where a C compiler exists)
// brings its ELF interpreter and shared libraries into the initramfs at their
// host paths. It mounts the shares, loads the
// requested modules (with their dependencies, resolved on the host from the
// kernel's modules.dep) and a given out-of-tree module such as quic.ko, brings
// up loopback, runs the command, and powers the guest off.
package vm
