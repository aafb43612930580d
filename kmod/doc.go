//go:build linux

// Package kmod detects, loads and checks the kernel features that kquic depends
// on: the out-of-tree QUIC module (IPPROTO_QUIC sockets), the TLS upper layer
// protocol used by kernel TLS, the netem qdisc, veth, BTF and UDP GSO/GRO.
//
// Loading works on plain, xz-, gzip- or zstd-named module files through
// finit_module(2), letting the kernel decompress where it can
// (CONFIG_MODULE_DECOMPRESS) and decompressing in Go otherwise. Dependencies
// are resolved from a module tree's modules.dep and from a module file's own
// .modinfo section, so a module built out of tree (quic.ko) loads together with
// what it needs (udp_tunnel, ip6_udp_tunnel).
//
// [Check] reports every feature with what to do when it is missing; it is what
// `kqbench doctor` prints. The VM harness that boots a kernel with these
// features lives in the sub-package kquic.dev/kmod/vm, and the Debian kernel it
// boots by default is fetched by kquic.dev/kmod/debkernel.
package kmod
