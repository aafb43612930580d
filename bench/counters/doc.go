//go:build linux

// Package counters counts, for one benchmark sample, what the kernel did to
// move the bytes: packets leaving a device (net:net_dev_start_xmit, with
// histograms of their frame and IP lengths and of their segments, which
// show GSO super-packets), packets entering the stack
// (net:netif_receive_skb, net:napi_gro_receive_entry), drops by reason and
// by the kernel function that dropped them (skb:kfree_skb), the benchmark process's syscalls by kind
// as they return, with the bytes the data calls returned (raw_syscalls:sys_exit), and the deltas of the per-namespace kernel
// counter files /proc/net/snmp, /proc/net/quic/snmp and /proc/net/tls_stat.
//
// The eBPF programs are written with cilium/ebpf's asm package (no clang)
// and attached as raw tracepoints (no tracefs needed); the kernel structure
// offsets they use come from the running kernel's BTF. Each map is keyed by
// (network namespace inode, ifindex), so the Go side picks the veth ends of
// the measured topology out of whatever else the host does.
//
// # The window
//
// Attaching the programs takes long under emulation, and a sample's window
// is short, so a Set counts from Start to Stop only when nobody says
// otherwise. Set.Begin and Set.End (the runner calls them just before and
// after it reads the byte counts) make the result cover exactly that
// window: each program stamps every event with bpf_ktime_get_ns and files it
// under an epoch (before, in, after) against a window kept in a one-entry
// array map, so how late the maps are read does not matter. Package
// bench/capture places packets by their kernel timestamps against the same
// window, so the two agree packet for packet.
//
// Without root or BTF, Start still succeeds: Result.Missing says which
// counters are absent and why, and the /proc counters are still read.
//
// # Integration in the matrix runner
//
// Around each sample's measured interval (after warm-up, before the
// goodput clock starts; Stop right after it stops):
//
//	p := counters.NewProbe(counters.Options{
//		Ends: []counters.End{
//			{Name: "client", Ifname: "kqb0", Do: topo.Client.Do},
//			{Name: "server", Ifname: "kqb1", Do: topo.Server.Do},
//		},
//		PID: os.Getpid(),
//	})
//	if err := p.Start(ctx); err != nil { ... }   // any thread/namespace
//	p.(bench.Windowed).Begin()                   // optional: open the window
//	... measured interval ...
//	p.(bench.Windowed).End()
//	vals, missing, err := p.Stop()
//	perMB := counters.PerMBMap(vals, bytesDelivered)
//
// Start and Stop can be called from any goroutine: the Probe enters each
// end's namespace itself (through End.Do) to resolve the device and to read
// /proc/thread-self/net/..., and eBPF is global to the host. In two-host
// mode give one End with Do nil (this host's namespace) and the real NIC.
// Names in vals are "<end>.<counter>", e.g. "client.tx_packets",
// "server.syscall.recvmsg", "server.syscall_bytes.recvmsg", "client.tx_size.gt65535",
// "client.tx_l3.le1500", "client.tx_segs.le4",
// "server.proc.Udp.RcvbufErrors"; missing lists "counter: reason".
package counters
