//go:build linux

package counters

import "github.com/cilium/ebpf/asm"

// dropProgram counts skb:kfree_skb, a packet freed because it was dropped
// (consume_skb, the normal end of a packet, has its own tracepoint).
//
//	TP_PROTO(struct sk_buff *skb, void *location, enum skb_drop_reason reason, ...)
//
// Key: skb->dev's netns and ifindex (zero when the skb has no device, e.g.
// a packet dropped before it was sent), aux = reason; value bytes +=
// skb->len.
func dropProgram(o *offsets, mapFD, windowFD int) asm.Instructions {
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1), // R6 = ctx
		ctxArg(asm.R9, 0),           // R9 = skb
		// R8 = skb->dev
		asm.StoreImm(asm.RFP, fpScratch, 0, asm.Word), asm.StoreImm(asm.RFP, fpScratch+4, 0, asm.Word),
	}
	insns = append(insns, probeRead(fpScratch, 8, asm.R9, o.skbDev)...)
	insns = append(insns, asm.LoadMem(asm.R8, asm.RFP, fpScratch, asm.DWord))
	insns = append(insns, devKey(o)...)
	// key.aux = reason
	insns = append(insns, ctxArg(asm.R7, 2), asm.StoreMem(asm.RFP, fpAux, asm.R7, asm.Word))
	// R7 = skb->len
	insns = append(insns, asm.StoreImm(asm.RFP, fpScratch, 0, asm.Word), asm.StoreImm(asm.RFP, fpScratch+4, 0, asm.Word))
	insns = append(insns, probeRead(fpScratch, 4, asm.R9, o.skbLen)...)
	insns = append(insns, asm.LoadMem(asm.R7, asm.RFP, fpScratch, asm.DWord))
	return append(insns, bump(mapFD, windowFD)...)
}
