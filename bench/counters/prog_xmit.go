//go:build linux

package counters

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// SizeBounds are the upper bounds (inclusive, bytes of skb->len) of the
// transmit size histogram; a last bucket holds larger packets. Packets above
// the MTU are GSO/TSO super-packets the device (veth) took whole.
var SizeBounds = []uint32{100, 300, 600, 1280, 1500, 3000, 9000, 16384, 32768, 65535}

// xmitProgram counts net:net_dev_xmit, the point where a packet (or a GSO
// super-packet) leaves the stack for a device driver.
//
//	TP_PROTO(struct sk_buff *skb, int rc, struct net_device *dev, unsigned int skb_len)
//
// Key: the device's netns and ifindex, aux = size bucket of skb_len;
// value bytes += skb_len.
func xmitProgram(o *offsets, mapFD, windowFD int) asm.Instructions {
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1), // R6 = ctx
		ctxArg(asm.R7, 3),           // R7 = skb_len
	}
	insns = append(insns, u32(asm.R7)...)
	insns = append(insns, ctxArg(asm.R8, 2)) // R8 = dev
	insns = append(insns, devKey(o)...)
	insns = append(insns, sizeBucket(asm.R7)...)
	return append(insns, bump(mapFD, windowFD)...)
}

// sizeBucket stores in key.aux the index of the first SizeBounds entry not
// below the length in r: an unrolled ladder of "aux = i; if r <= bound goto
// done" (bpf has no loops cheaper than that for ten steps).
func sizeBucket(r asm.Register) asm.Instructions {
	var insns asm.Instructions
	for i, b := range SizeBounds {
		insns = append(insns,
			asm.StoreImm(asm.RFP, fpAux, int64(i), asm.Word),
			asm.JLE.Imm(r, int32(b), "bucketed"),
		)
	}
	insns = append(insns, asm.StoreImm(asm.RFP, fpAux, int64(len(SizeBounds)), asm.Word))
	// The next instruction (the first of bump) carries the label.
	return append(insns, asm.Mov.Reg(asm.R0, asm.R0).WithSymbol("bucketed"))
}

// bucketName names histogram bucket i, e.g. "le1500" or "gt65535".
func bucketName(i int) string {
	if i < len(SizeBounds) {
		return fmt.Sprintf("le%d", SizeBounds[i])
	}
	return fmt.Sprintf("gt%d", SizeBounds[len(SizeBounds)-1])
}
