//go:build linux

package counters

import (
	"sort"
)

// Result is what a Set counted between Start and Stop.
type Result struct {
	// Ends holds one entry per Options.Ends, in order.
	Ends []EndResult
	// Missing names each counter that was not counted, with the reason.
	// Keys: "tx", "rx", "gro", "drops", "syscalls" for the eBPF counters,
	// "drops.where" when the drops' functions could not be named,
	// "<end>.snmp", "<end>.quic", "<end>.tls" for the /proc/net files.
	Missing map[string]string
}

// EndResult is the counts of one end.
type EndResult struct {
	Name       string
	Ifname     string
	Ifindex    int
	NetnsInode uint32

	// TxPackets and TxBytes count net_dev_start_xmit on the device (a GSO
	// super-packet counts once, with its full length).
	TxPackets, TxBytes uint64
	// TxSizes is the histogram of the transmitted skb lengths (the frame,
	// link-layer header included: 1514 bytes for a full frame at MTU
	// 1500), bucketed by SizeBounds (one more bucket for larger ones).
	TxSizes []uint64
	// TxL3Sizes is the same histogram of the network-layer length (the
	// IP packet, what the MTU bounds: 1500 at MTU 1500), so that a full
	// frame (le1500) and a two-segment super-packet (le3000) part.
	TxL3Sizes []uint64
	// TxSegs is the histogram of segments per transmitted packet
	// (gso_segs; 1 for a packet that is not a super-packet), bucketed by
	// SegBounds.
	TxSegs []uint64
	// RxPackets and RxBytes count netif_receive_skb on the device.
	RxPackets, RxBytes uint64
	// GROPackets counts napi_gro_receive_entry on the device (veth only
	// uses NAPI with XDP or GRO enabled, so usually 0).
	GROPackets uint64
	// Drops counts kfree_skb of packets whose device is in this end's
	// namespace, by drop reason (e.g. "SOCKET_RCVBUFF", "NOT_SPECIFIED").
	Drops map[string]uint64
	// DropsAt counts the same drops by reason and the kernel function
	// that freed the packet ("NOT_SPECIFIED@quic_packet_rcv"), where
	// /proc/kallsyms names it; DropSites has each place in full.
	DropsAt   map[string]uint64
	DropSites []DropSite
	// Syscalls counts the syscalls the process made from threads in this
	// end's namespace, by name ("sendmsg", "nr_123" for unnamed ones). A
	// call counts when it returns: a read that blocks across the window's
	// end counts after it.
	Syscalls map[string]uint64
	// SyscallBytes is the sum of what those calls returned, where it is
	// positive (an error returns no bytes), for the calls whose return is a
	// byte count (read, write, sendmsg, recvmsg, ...): counted by the same
	// event as the call, so bytes a call is exact for the window.
	SyscallBytes map[string]uint64
	// Proc holds the deltas of /proc/net/snmp ("Udp.RcvbufErrors"),
	// /proc/net/quic/snmp ("Quic.<name>") and /proc/net/tls_stat
	// ("Tls.<name>") in this end's namespace.
	Proc map[string]int64
}

func (er *EndResult) fill(d map[string]map[mapKey]mapValue, o *offsets) {
	er.TxSizes = make([]uint64, len(SizeBounds)+1)
	er.TxL3Sizes = make([]uint64, len(SizeBounds)+1)
	er.TxSegs = make([]uint64, len(SegBounds)+1)
	er.Syscalls = map[string]uint64{}
	er.SyscallBytes = map[string]uint64{}
	dev := func(k mapKey) bool { return k.Inum == er.NetnsInode && int(k.Ifindex) == er.Ifindex }
	for k, v := range d[mapXmit] {
		if dev(k) {
			er.TxPackets += v.Count
			er.TxBytes += v.Bytes
			link, l3, segs := auxBuckets(k.Aux)
			if link < len(er.TxSizes) {
				er.TxSizes[link] += v.Count
			}
			if l3 < len(er.TxL3Sizes) {
				er.TxL3Sizes[l3] += v.Count
			}
			if segs < len(er.TxSegs) {
				er.TxSegs[segs] += v.Count
			}
		}
	}
	for k, v := range d[mapRx] {
		if dev(k) {
			er.RxPackets += v.Count
			er.RxBytes += v.Bytes
		}
	}
	for k, v := range d[mapGRO] {
		if dev(k) {
			er.GROPackets += v.Count
		}
	}
	for k, v := range d[mapSyscall] {
		if k.Inum == er.NetnsInode {
			name := syscallName(k.Aux)
			er.Syscalls[name] += v.Count
			if byteSyscalls[name] {
				er.SyscallBytes[name] += v.Bytes
			}
		}
	}
}

// Flat turns the result into "<end>.<counter>" numbers, e.g.
// "client.tx_packets", "server.syscall.recvmsg" (calls),
// "server.syscall_bytes.recvmsg" (the bytes they returned), "server.proc.Udp.RcvbufErrors",
// "client.tx_size.le3000" (frames with their link-layer header),
// "client.tx_l3.le1500" (IP packets), "client.tx_segs.2" (segments per
// packet), "server.drop.SOCKET_RCVBUFF" and, by the
// function that dropped, "server.drop.SOCKET_RCVBUFF@__udp_enqueue_schedule_skb"
// (these add up to the reason's count where every place was named).
// Counters that were not counted are absent (see Missing).
func (r Result) Flat() map[string]float64 {
	out := map[string]float64{}
	for _, e := range r.Ends {
		p := e.Name + "."
		if _, miss := r.Missing["tx"]; !miss {
			out[p+"tx_packets"] = float64(e.TxPackets)
			out[p+"tx_bytes"] = float64(e.TxBytes)
			for i, n := range e.TxSizes {
				out[p+"tx_size."+bucketName(i)] = float64(n)
			}
			for i, n := range e.TxL3Sizes {
				out[p+"tx_l3."+bucketName(i)] = float64(n)
			}
			for i, n := range e.TxSegs {
				out[p+"tx_segs."+segBucketName(i)] = float64(n)
			}
		}
		if _, miss := r.Missing["rx"]; !miss {
			out[p+"rx_packets"] = float64(e.RxPackets)
			out[p+"rx_bytes"] = float64(e.RxBytes)
		}
		if _, miss := r.Missing["gro"]; !miss {
			out[p+"gro_packets"] = float64(e.GROPackets)
		}
		if _, miss := r.Missing["drops"]; !miss {
			var total uint64
			for k, n := range e.Drops {
				out[p+"drop."+k] = float64(n)
				total += n
			}
			for k, n := range e.DropsAt {
				out[p+"drop."+k] = float64(n)
			}
			out[p+"drops"] = float64(total)
		}
		if _, miss := r.Missing["syscalls"]; !miss {
			var total uint64
			for k, n := range e.Syscalls {
				total += n
				if _, named := syscallNames[k]; named {
					out[p+"syscall."+k] = float64(n)
				}
			}
			for k := range syscallNames {
				if _, ok := out[p+"syscall."+k]; !ok {
					out[p+"syscall."+k] = 0
				}
				if byteSyscalls[k] {
					out[p+"syscall_bytes."+k] = float64(e.SyscallBytes[k])
				}
			}
			out[p+"syscalls"] = float64(total)
		}
		for k, n := range e.Proc {
			if n != 0 || alwaysProc[k] {
				out[p+"proc."+k] = float64(n)
			}
		}
	}
	return out
}

// PerMB divides every counter of r.Flat() by the megabytes (1e6 bytes) of
// application payload delivered, so cells of different speeds compare:
// "client.syscall.sendmsg" becomes sendmsg calls per MB delivered. With
// bytesDelivered 0 it returns nil.
func PerMB(r Result, bytesDelivered int64) map[string]float64 {
	if bytesDelivered <= 0 {
		return nil
	}
	mb := float64(bytesDelivered) / 1e6
	out := map[string]float64{}
	for k, v := range r.Flat() {
		out[k] = v / mb
	}
	return out
}

// MissingList renders Missing as sorted "counter: reason" lines.
func (r Result) MissingList() []string {
	var out []string
	for k, v := range r.Missing {
		out = append(out, k+": "+v)
	}
	sort.Strings(out)
	return out
}
