//go:build linux

package counters

import "github.com/cilium/ebpf/asm"

// rxProgram counts packets entering the stack from a device. It serves two
// tracepoints with the same prototype:
//
//	net:netif_receive_skb        TP_PROTO(struct sk_buff *skb)
//	net:napi_gro_receive_entry   TP_PROTO(const struct sk_buff *skb)
//
// The first sees every packet the stack processes (after GRO merged them),
// the second every packet a NAPI driver hands to GRO. Key: skb->dev's netns
// and ifindex, aux 0; value bytes += skb->len.
func rxProgram(o *offsets, mapFD, windowFD int) asm.Instructions {
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1), // R6 = ctx
		ctxArg(asm.R9, 0),           // R9 = skb
		// R7 = skb->len: a 4-byte read into the zeroed 8-byte scratch.
		asm.StoreImm(asm.RFP, fpScratch, 0, asm.Word), asm.StoreImm(asm.RFP, fpScratch+4, 0, asm.Word),
	}
	insns = append(insns, probeRead(fpScratch, 4, asm.R9, o.skbLen)...)
	insns = append(insns, asm.LoadMem(asm.R7, asm.RFP, fpScratch, asm.DWord))
	// R8 = skb->dev
	insns = append(insns, probeRead(fpScratch, 8, asm.R9, o.skbDev)...)
	insns = append(insns, asm.LoadMem(asm.R8, asm.RFP, fpScratch, asm.DWord))
	insns = append(insns, devKey(o)...)
	return append(insns, bump(mapFD, windowFD)...)
}
