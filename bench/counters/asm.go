//go:build linux

package counters

import (
	"github.com/cilium/ebpf/asm"
)

// All programs are raw tracepoints (BPF_RAW_TRACEPOINT_OPEN by name), which
// need neither tracefs nor the tracepoint format files: the context (R1)
// is an array of the tracepoint's TP_PROTO arguments, each widened to u64.
// Kernel memory is read with bpf_probe_read_kernel at offsets taken from
// BTF (see offsets), which zero-fills its destination when the read faults,
// so a NULL pointer simply yields a zero key field.
//
// Every program counts into a hash map with the same 16-byte key and value:
//
//	key   { u32 netns_inum; u32 ifindex; u32 aux; u32 epoch }  at fp-16
//	value { u64 count; u64 bytes }                               at fp-40
//
// aux is what the program histograms (size bucket, drop reason, syscall
// number). The scratch slot fp-24 receives pointers read from the kernel.
//
// epoch places the event in the measurement window, by the kernel's clock
// (bpf_ktime_get_ns, CLOCK_MONOTONIC) against the window map's one entry
// { u64 begin; u64 end } (0: not set): 0 before begin (or no begin), 1 in
// the window, 2 after end. So the window is exact however late the reader
// reads the maps, and it is the same window as the capture's, which goes by
// the kernel's packet timestamps.
//
// Register use: R6 = context, R7 = byte count to add, R8 = net_device or
// task pointer, R9 = sk_buff pointer (pt_regs pointer in the syscall
// program). R6-R9 survive helper calls; R0-R5
// do not.
const (
	fpKey     = -16 // key.netns_inum
	fpIfindex = -12 // key.ifindex
	fpAux     = -8  // key.aux
	fpScratch = -24 // u64 scratch for probe reads
	fpValue   = -40 // value.count; value.bytes at -32
	fpEpoch   = -4  // key.epoch
	fpNow     = -48 // u64 bpf_ktime_get_ns at the count
)

// Epochs (key.epoch).
const (
	epochBefore = 0
	epochIn     = 1
	epochAfter  = 2
)

// windowValue is the window map's entry (CLOCK_MONOTONIC ns, 0: not set).
type windowValue struct {
	Begin, End uint64
}

// keySize and valueSize are the map layouts above.
const (
	keySize   = 16
	valueSize = 16
)

type mapKey struct {
	Inum, Ifindex, Aux, Epoch uint32
}

type mapValue struct {
	Count, Bytes uint64
}

// ctxArg loads the i-th tracepoint argument into dst.
func ctxArg(dst asm.Register, i int16) asm.Instruction {
	return asm.LoadMem(dst, asm.R6, 8*i, asm.DWord)
}

// probeRead emits bpf_probe_read_kernel(fp+fpOff, size, src+off). src must
// not be R3.
func probeRead(fpOff int16, size int32, src asm.Register, off int32) asm.Instructions {
	// R3 first: src may be R1 or R2.
	return asm.Instructions{
		asm.Mov.Reg(asm.R3, src),
		asm.Add.Imm(asm.R3, off),
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, int32(fpOff)),
		asm.Mov.Imm(asm.R2, size),
		asm.FnProbeReadKernel.Call(),
	}
}

// zeroKey clears the 16-byte key: the verifier rejects a map key with
// uninitialised stack bytes, padding included.
func zeroKey() asm.Instructions {
	return asm.Instructions{
		asm.StoreImm(asm.RFP, fpKey, 0, asm.Word), asm.StoreImm(asm.RFP, fpKey+4, 0, asm.Word),
		asm.StoreImm(asm.RFP, fpAux, 0, asm.Word), asm.StoreImm(asm.RFP, fpAux+4, 0, asm.Word),
	}
}

// devKey fills key.ifindex and key.netns_inum from the net_device pointer
// in R8: ifindex = dev->ifindex; net = dev->nd_net.net; inum = net->ns.inum.
func devKey(o *offsets) asm.Instructions {
	insns := zeroKey()
	insns = append(insns, probeRead(fpIfindex, 4, asm.R8, o.devIfindex)...)
	insns = append(insns, probeRead(fpScratch, 8, asm.R8, o.devNet)...)
	insns = append(insns, asm.LoadMem(asm.R1, asm.RFP, fpScratch, asm.DWord))
	insns = append(insns, probeRead(fpKey, 4, asm.R1, o.netInum)...)
	return insns
}

// u32 clears the upper half of r (a u32 argument widened to u64).
func u32(r asm.Register) asm.Instructions {
	return asm.Instructions{asm.LSh.Imm(r, 32), asm.RSh.Imm(r, 32)}
}

// bump adds {1, R7} to the map value at the key on the stack (its epoch
// set from the window map first), creating it when absent, and ends the
// program:
//
//	now = ktime_get_ns(); w = lookup(window, 0)
//	epoch = !w || !w.begin || now < w.begin ? 0 : !w.end || now <= w.end ? 1 : 2
//	v = lookup(map, key)
//	if !v { update(map, key, {0,0}, BPF_NOEXIST); v = lookup(map, key); if !v return 0 }
//	atomic v.count += 1; atomic v.bytes += R7
//	return 0
//
// BPF_NOEXIST makes a concurrent first insert on another CPU harmless: the
// loser's update fails and its second lookup finds the winner's entry.
func bump(mapFD, windowFD int) asm.Instructions { return bumpAt(mapFD, windowFD, fpKey) }

// bumpAt is bump with the key at fp+keyOff (its epoch at keyOff+12), for
// maps whose key is longer than the common one (the drop map's carries
// the drop's location after the epoch).
func bumpAt(mapFD, windowFD int, keyOff int16) asm.Instructions {
	return asm.Instructions{
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.RFP, fpNow, asm.R0, asm.DWord),
		asm.StoreImm(asm.RFP, keyOff+12, epochBefore, asm.Word),
		asm.StoreImm(asm.RFP, fpScratch, 0, asm.Word), // window key 0
		asm.LoadMapPtr(asm.R1, windowFD),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, fpScratch),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "count"),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord), // begin
		asm.JEq.Imm(asm.R1, 0, "count"),
		asm.LoadMem(asm.R2, asm.RFP, fpNow, asm.DWord),
		asm.JLT.Reg(asm.R2, asm.R1, "count"),
		asm.StoreImm(asm.RFP, keyOff+12, epochIn, asm.Word),
		asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord), // end
		asm.JEq.Imm(asm.R1, 0, "count"),
		asm.JLE.Reg(asm.R2, asm.R1, "count"),
		asm.StoreImm(asm.RFP, keyOff+12, epochAfter, asm.Word),

		asm.LoadMapPtr(asm.R1, mapFD).WithSymbol("count"),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(keyOff)),
		asm.FnMapLookupElem.Call(),
		asm.JNE.Imm(asm.R0, 0, "add"),
		asm.StoreImm(asm.RFP, fpValue, 0, asm.Word), asm.StoreImm(asm.RFP, fpValue+4, 0, asm.Word),
		asm.StoreImm(asm.RFP, fpValue+8, 0, asm.Word), asm.StoreImm(asm.RFP, fpValue+8+4, 0, asm.Word),
		asm.LoadMapPtr(asm.R1, mapFD),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(keyOff)),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, fpValue),
		asm.Mov.Imm(asm.R4, 1), // BPF_NOEXIST
		asm.FnMapUpdateElem.Call(),
		asm.LoadMapPtr(asm.R1, mapFD),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(keyOff)),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.Mov.Imm(asm.R1, 1).WithSymbol("add"),
		asm.AddAtomic.Mem(asm.R0, asm.R1, asm.DWord, 0),
		asm.AddAtomic.Mem(asm.R0, asm.R7, asm.DWord, 8),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	}
}
