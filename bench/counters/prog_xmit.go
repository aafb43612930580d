//go:build linux

package counters

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// SizeBounds are the upper bounds (inclusive, bytes) of the transmit size
// histograms; a last bucket holds larger packets. Packets above the MTU are
// GSO/TSO super-packets the device (veth) took whole.
var SizeBounds = []uint32{100, 300, 600, 1280, 1500, 3000, 9000, 16384, 32768, 65535}

// SegBounds are the upper bounds of the histogram of segments per
// transmitted packet (1 for a packet that is not a GSO super-packet).
var SegBounds = []uint32{1, 2, 4, 8, 16, 32, 64}

// The transmit histograms share one map: key.aux holds the three bucket
// indices, a byte each.
const (
	auxLink = 0  // skb_len, the frame with its link-layer header: tx_size
	auxL3   = 8  // the network-layer length (IP header and payload): tx_l3
	auxSegs = 16 // the segments (gso_segs): tx_segs
)

// Stack slots of the transmit program (below the common layout).
const (
	fpHead   = -56 // skb->head
	fpData   = -64 // skb->data
	fpNet    = -72 // skb->network_header
	fpEnd    = -80 // skb->end
	fpGSO    = -88 // shinfo->gso_size
	fpSegs   = -96 // shinfo->gso_segs
	fpL3Bkt  = -100
	fpSegBkt = -104
)

// xmitProgram counts net:net_dev_start_xmit, the point where a packet (or
// a GSO super-packet the device takes whole) is handed to a device driver:
// after the stack segmented what the device cannot, before the driver has
// the packet. (net:net_dev_xmit, where the driver has returned, comes too
// late to read the packet: veth has already passed it to its peer, which
// moved its headers, and a NIC may have freed it.)
//
//	TP_PROTO(const struct sk_buff *skb, const struct net_device *dev)
//
// Key: the device's netns and ifindex, aux = the size buckets of skb->len
// (the frame, link-layer header included) and of the network-layer length
// (skb->len less skb_network_offset: what the MTU bounds), and the bucket of
// the packet's segments (skb_shinfo(skb)->gso_segs, 1 where gso_size is 0);
// value bytes += skb->len. So a 1514-byte frame at MTU 1500 (1500 bytes of
// IP, one segment) and a two-segment super-packet (two segments, about
// 2900 bytes of IP) fall in different buckets of both tx_l3 and tx_segs.
func xmitProgram(o *offsets, mapFD, windowFD int) asm.Instructions {
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1), // R6 = ctx
		ctxArg(asm.R9, 0),           // R9 = skb
	}
	read := func(slot int16, size int32, src asm.Register, off int32) {
		insns = append(insns, asm.StoreImm(asm.RFP, slot, 0, asm.Word), asm.StoreImm(asm.RFP, slot+4, 0, asm.Word))
		insns = append(insns, probeRead(slot, size, src, off)...)
	}
	read(fpHead, 8, asm.R9, o.skbHead)
	read(fpData, 8, asm.R9, o.skbData)
	read(fpNet, 2, asm.R9, o.skbNetwork)
	endSize := int32(4)
	if o.skbEndIsPtr {
		endSize = 8
	}
	read(fpEnd, endSize, asm.R9, o.skbEnd)
	// R1 = the skb_shared_info: head + end (or end, a pointer).
	insns = append(insns, asm.LoadMem(asm.R1, asm.RFP, fpEnd, asm.DWord))
	if !o.skbEndIsPtr {
		insns = append(insns, asm.LoadMem(asm.R2, asm.RFP, fpHead, asm.DWord), asm.Add.Reg(asm.R1, asm.R2))
	}
	insns = append(insns, asm.Mov.Reg(asm.R8, asm.R1)) // R8 = shinfo until the device is read
	read(fpGSO, 2, asm.R8, o.shinfoGSO)
	read(fpSegs, 2, asm.R8, o.shinfoGSOSeg)

	read(fpScratch, 4, asm.R9, o.skbLen)
	insns = append(insns, asm.LoadMem(asm.R7, asm.RFP, fpScratch, asm.DWord)) // R7 = skb->len
	insns = append(insns, ctxArg(asm.R8, 1))                                  // R8 = dev
	insns = append(insns, devKey(o)...)                                       // the last helper call until bump

	// R1 = the network-layer length: skb_len - (network_header - (data - head)),
	// or skb_len where the header is unset (0xffff) or out of range.
	insns = append(insns,
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.LoadMem(asm.R2, asm.RFP, fpNet, asm.DWord),
		asm.JEq.Imm(asm.R2, 0xffff, "l3done"),
		asm.LoadMem(asm.R3, asm.RFP, fpData, asm.DWord),
		asm.LoadMem(asm.R4, asm.RFP, fpHead, asm.DWord),
		asm.Sub.Reg(asm.R3, asm.R4), // R3 = data - head
		asm.JGT.Reg(asm.R3, asm.R2, "l3done"),
		asm.Sub.Reg(asm.R2, asm.R3), // R2 = network offset
		asm.JGT.Reg(asm.R2, asm.R7, "l3done"),
		asm.Sub.Reg(asm.R1, asm.R2),
		asm.Mov.Reg(asm.R0, asm.R0).WithSymbol("l3done"),
	)
	insns = append(insns, ladder(asm.R1, SizeBounds, fpL3Bkt, "l3bucketed")...)
	// R1 = segments: gso_segs where gso_size is set, at least 1.
	insns = append(insns,
		asm.Mov.Imm(asm.R1, 1),
		asm.LoadMem(asm.R2, asm.RFP, fpGSO, asm.DWord),
		asm.JEq.Imm(asm.R2, 0, "segsdone"),
		asm.LoadMem(asm.R2, asm.RFP, fpSegs, asm.DWord),
		asm.JEq.Imm(asm.R2, 0, "segsdone"),
		asm.Mov.Reg(asm.R1, asm.R2),
		asm.Mov.Reg(asm.R0, asm.R0).WithSymbol("segsdone"),
	)
	insns = append(insns, ladder(asm.R1, SegBounds, fpSegBkt, "segbucketed")...)
	insns = append(insns, ladder(asm.R7, SizeBounds, fpAux, "bucketed")...)
	// aux |= l3 bucket << 8 | segments bucket << 16
	insns = append(insns,
		asm.LoadMem(asm.R1, asm.RFP, fpAux, asm.Word),
		asm.LoadMem(asm.R2, asm.RFP, fpL3Bkt, asm.Word),
		asm.LSh.Imm(asm.R2, auxL3),
		asm.Or.Reg(asm.R1, asm.R2),
		asm.LoadMem(asm.R2, asm.RFP, fpSegBkt, asm.Word),
		asm.LSh.Imm(asm.R2, auxSegs),
		asm.Or.Reg(asm.R1, asm.R2),
		asm.StoreMem(asm.RFP, fpAux, asm.R1, asm.Word),
	)
	return append(insns, bump(mapFD, windowFD)...)
}

// ladder stores at fp+slot the index of the first bound not below the
// value in r (len(bounds) for larger ones): an unrolled ladder of
// "slot = i; if r <= bound goto done" (bpf has no loops cheaper than that
// for ten steps). done labels the instruction after it.
func ladder(r asm.Register, bounds []uint32, slot int16, done string) asm.Instructions {
	var insns asm.Instructions
	for i, b := range bounds {
		insns = append(insns,
			asm.StoreImm(asm.RFP, slot, int64(i), asm.Word),
			asm.JLE.Imm(r, int32(b), done),
		)
	}
	insns = append(insns, asm.StoreImm(asm.RFP, slot, int64(len(bounds)), asm.Word))
	return append(insns, asm.Mov.Reg(asm.R0, asm.R0).WithSymbol(done))
}

// auxBuckets splits a transmit key's aux into its three bucket indices.
func auxBuckets(aux uint32) (link, l3, segs int) {
	return int(aux >> auxLink & 0xff), int(aux >> auxL3 & 0xff), int(aux >> auxSegs & 0xff)
}

// bucketName names histogram bucket i, e.g. "le1500" or "gt65535".
func bucketName(i int) string { return boundName(SizeBounds, i) }

// segBucketName names segment bucket i: "1", "2", "le4", ..., "gt64".
func segBucketName(i int) string {
	if i < 2 {
		return fmt.Sprint(SegBounds[i])
	}
	return boundName(SegBounds, i)
}

func boundName(bounds []uint32, i int) string {
	if i < len(bounds) {
		return fmt.Sprintf("le%d", bounds[i])
	}
	return fmt.Sprintf("gt%d", bounds[len(bounds)-1])
}
