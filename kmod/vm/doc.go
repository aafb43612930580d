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
//
// [Start] runs a guest in the background as a [Machine] (Wait, Stop); [Run]
// is Start and Wait.
//
// # Two guests as two hosts
//
// [StartPair] and [RunPair] boot two guests, A and B, each with its own
// [Config] (kernel, module tree, out-of-tree modules: an old client and a
// new server), joined by a virtio-net link ([Link]): qemu's dgram netdev
// over a Unix socket pair ([LinkSocket], no privilege, but no virtio-net
// headers, so no TSO, GSO or checksum offload), or a tap device per guest on a
// bridge in a network namespace of the link's own ([LinkTap], root: TSO,
// GSO, GRO, checksum offload and several queues, as virtio-net implements
// them). The guests' init gives the device its address (A 10.77.0.1/24, B
// 10.77.0.2/24), MTU and offloads, reports what the guest is ([GuestInfo]:
// boot ID, kernel, the out-of-tree modules as loaded, the device's
// driver, queues and offloads) and starts both commands once both guests
// are up. RunPair treats B as A's peer: when A's command ends B's is sent
// SIGTERM; when B's guest fails (a kernel panic) A's is stopped; either
// way nothing of qemu or the link is left, and the error names the guest
// that failed.
package vm
