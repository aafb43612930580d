//go:build linux

package counters

import "github.com/cilium/ebpf/asm"

// The drop map's key is the common one followed by the drop's location:
//
//	key { u32 netns_inum; u32 ifindex; u32 aux; u32 epoch; u64 location }  at fp-72
//
// built at fp-16 as usual and copied down, the location stored after it.
const (
	fpDropKey = -72
	fpDropLoc = -56
	// dropKeySize is the drop map's key size.
	dropKeySize = 24
)

// dropKey is the drop map's key (see fpDropKey).
type dropKey struct {
	Inum, Ifindex, Aux, Epoch uint32
	Location                  uint64
}

// dropProgram counts skb:kfree_skb, a packet freed because it was dropped
// (consume_skb, the normal end of a packet, has its own tracepoint).
//
//	TP_PROTO(struct sk_buff *skb, void *location, enum skb_drop_reason reason, ...)
//
// Key: skb->dev's netns and ifindex (zero when the skb has no device, e.g.
// a packet dropped before it was sent), aux = reason, and the location:
// the return address into the function that freed the packet (which the
// Go side names from /proc/kallsyms); value bytes += skb->len.
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
	// The long key: the common key copied to fp-72, the location after it.
	insns = append(insns,
		asm.LoadMem(asm.R1, asm.RFP, fpKey, asm.DWord), asm.StoreMem(asm.RFP, fpDropKey, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, fpAux, asm.DWord), asm.StoreMem(asm.RFP, fpDropKey+8, asm.R1, asm.DWord),
		ctxArg(asm.R1, 1), asm.StoreMem(asm.RFP, fpDropLoc, asm.R1, asm.DWord),
	)
	// R7 = skb->len
	insns = append(insns, asm.StoreImm(asm.RFP, fpScratch, 0, asm.Word), asm.StoreImm(asm.RFP, fpScratch+4, 0, asm.Word))
	insns = append(insns, probeRead(fpScratch, 4, asm.R9, o.skbLen)...)
	insns = append(insns, asm.LoadMem(asm.R7, asm.RFP, fpScratch, asm.DWord))
	return append(insns, bumpAt(mapFD, windowFD, fpDropKey)...)
}
