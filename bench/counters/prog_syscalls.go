//go:build linux

package counters

import "github.com/cilium/ebpf/asm"

// syscallProgram counts raw_syscalls:sys_exit for one process: each system
// call as it returns, with the bytes it returned.
//
//	TP_PROTO(struct pt_regs *regs, long ret)
//
// It returns at once unless bpf_get_current_pid_tgid()>>32 (the tgid, the
// process id seen from the initial pid namespace) is tgid. Key: the calling
// thread's network namespace (current->nsproxy->net_ns->ns.inum), so the
// client and server threads of one process that sit in different
// namespaces are told apart; ifindex 0; aux = the syscall number, read from
// regs at o.regsNr (what syscall_get_nr reads: orig_ax on x86, syscallno on
// arm64). Bytes: ret where it is positive, else 0, so that a call and the
// bytes it returned are counted by one event, in one window (for read,
// write, sendmsg, recvmsg and their kin ret is a byte count; for others,
// such as epoll_pwait, it is not, and the bytes are not reported).
func syscallProgram(o *offsets, mapFD, windowFD int, tgid uint32) asm.Instructions {
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1), // R6 = ctx
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.JNE.Imm(asm.R0, int32(tgid), "out"), // not our process: return 0 (the label is in bump)
		ctxArg(asm.R9, 0),                       // R9 = regs
		ctxArg(asm.R7, 1),                       // R7 = ret
		asm.JSGE.Imm(asm.R7, 0, "retok"),
		asm.Mov.Imm(asm.R7, 0), // an error returned no bytes
		asm.FnGetCurrentTask.Call().WithSymbol("retok"),
		asm.Mov.Reg(asm.R8, asm.R0), // R8 = current
	}
	insns = append(insns, zeroKey()...)
	insns = append(insns, probeRead(fpAux, 4, asm.R9, o.regsNr)...) // key.aux = syscall number
	// R1 = current->nsproxy; R1 = nsproxy->net_ns; key.inum = net->ns.inum
	insns = append(insns, probeRead(fpScratch, 8, asm.R8, o.taskNsproxy)...)
	insns = append(insns, asm.LoadMem(asm.R1, asm.RFP, fpScratch, asm.DWord))
	insns = append(insns, probeRead(fpScratch, 8, asm.R1, o.nsproxyNet)...)
	insns = append(insns, asm.LoadMem(asm.R1, asm.RFP, fpScratch, asm.DWord))
	insns = append(insns, probeRead(fpKey, 4, asm.R1, o.netInum)...)
	return append(insns, bump(mapFD, windowFD)...)
}
