//go:build linux

package counters

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cilium/ebpf/btf"
)

// offsets are the byte offsets of the kernel structure fields the programs
// read with bpf_probe_read_kernel. They come from the running kernel's BTF
// (/sys/kernel/btf/vmlinux), so the programs need no clang and no CO-RE:
// the Go code computes each offset once and writes it into the instructions
// as a constant.
type offsets struct {
	skbDev      int32 // struct sk_buff: .dev (struct net_device *)
	skbLen      int32 // struct sk_buff: .len (unsigned int)
	devIfindex  int32 // struct net_device: .ifindex (int)
	devNet      int32 // struct net_device: .nd_net.net (struct net *)
	netInum     int32 // struct net: .ns.inum (unsigned int)
	taskNsproxy int32 // struct task_struct: .nsproxy
	nsproxyNet  int32 // struct nsproxy: .net_ns (struct net *)

	// For the transmitted packets' network-layer length and segments.
	skbHead      int32 // struct sk_buff: .head (unsigned char *)
	skbData      int32 // struct sk_buff: .data (unsigned char *)
	skbEnd       int32 // struct sk_buff: .end (sk_buff_data_t)
	skbEndIsPtr  bool  // sk_buff_data_t is a pointer (32-bit kernels), else an offset from head
	skbNetwork   int32 // struct sk_buff: .network_header (__u16)
	shinfoGSO    int32 // struct skb_shared_info: .gso_size (unsigned short)
	shinfoGSOSeg int32 // struct skb_shared_info: .gso_segs (unsigned short)

	dropReasons map[uint32]string // enum skb_drop_reason, without the SKB_DROP_REASON_ prefix

	// regsNr is where struct pt_regs holds the syscall number
	// (syscall_get_nr: orig_ax on x86, syscallno on arm64), or -1 where
	// neither member is there; regsNrErr then says so.
	regsNr    int32
	regsNrErr error
}

// regsNrFields are pt_regs' members that hold the number of the system
// call, by architecture; the first the kernel's BTF has is used.
var regsNrFields = []string{"orig_ax", "syscallno", "orig_gpr2", "orig_a0"}

var (
	kernelOffsetsOnce sync.Once
	kernelOffsets     *offsets
	kernelOffsetsErr  error
)

// loadOffsets reads the running kernel's BTF once per process.
func loadOffsets() (*offsets, error) {
	kernelOffsetsOnce.Do(func() {
		spec, err := btf.LoadKernelSpec()
		if err != nil {
			kernelOffsetsErr = fmt.Errorf("kernel BTF: %w (needs CONFIG_DEBUG_INFO_BTF and /sys/kernel/btf/vmlinux)", err)
			return
		}
		kernelOffsets, kernelOffsetsErr = offsetsFrom(spec)
	})
	return kernelOffsets, kernelOffsetsErr
}

func offsetsFrom(spec *btf.Spec) (*offsets, error) {
	o := &offsets{}
	for _, f := range []struct {
		dst          *int32
		struc, field string
	}{
		{&o.skbDev, "sk_buff", "dev"},
		{&o.skbLen, "sk_buff", "len"},
		{&o.devIfindex, "net_device", "ifindex"},
		{&o.devNet, "net_device", "nd_net.net"},
		{&o.netInum, "net", "ns.inum"},
		{&o.taskNsproxy, "task_struct", "nsproxy"},
		{&o.nsproxyNet, "nsproxy", "net_ns"},
		{&o.skbHead, "sk_buff", "head"},
		{&o.skbData, "sk_buff", "data"},
		{&o.skbEnd, "sk_buff", "end"},
		{&o.skbNetwork, "sk_buff", "network_header"},
		{&o.shinfoGSO, "skb_shared_info", "gso_size"},
		{&o.shinfoGSOSeg, "skb_shared_info", "gso_segs"},
	} {
		off, err := fieldOffset(spec, f.struc, f.field)
		if err != nil {
			return nil, fmt.Errorf("kernel BTF: struct %s field %s: %w", f.struc, f.field, err)
		}
		*f.dst = off
	}
	// sk_buff_data_t is an offset from head where longs have 64 bits.
	endType, err := memberType(spec, "sk_buff", "end")
	if err != nil {
		return nil, fmt.Errorf("kernel BTF: struct sk_buff field end: %w", err)
	}
	_, o.skbEndIsPtr = btf.UnderlyingType(endType).(*btf.Pointer)
	o.regsNr, o.regsNrErr = -1, fmt.Errorf("kernel BTF: struct pt_regs has none of %v (where this architecture keeps the syscall number)", regsNrFields)
	for _, name := range regsNrFields {
		if off, err := fieldOffset(spec, "pt_regs", name); err == nil {
			o.regsNr, o.regsNrErr = off, nil
			break
		}
	}
	o.dropReasons = map[uint32]string{}
	var e *btf.Enum
	if err := spec.TypeByName("skb_drop_reason", &e); err == nil {
		for _, v := range e.Values {
			o.dropReasons[uint32(v.Value)] = strings.TrimPrefix(v.Name, "SKB_DROP_REASON_")
		}
	}
	return o, nil
}

// memberType is the type of a dotted path of members in a struct.
func memberType(spec *btf.Spec, structName, path string) (btf.Type, error) {
	var s *btf.Struct
	if err := spec.TypeByName(structName, &s); err != nil {
		return nil, err
	}
	var typ btf.Type = s
	for _, name := range strings.Split(path, ".") {
		_, mt, ok := findMember(typ, name)
		if !ok {
			return nil, fmt.Errorf("no member %q", name)
		}
		typ = mt
	}
	return typ, nil
}

// fieldOffset resolves a dotted path of members ("nd_net.net") in a struct,
// looking through anonymous unions and structs the way C does.
func fieldOffset(spec *btf.Spec, structName, path string) (int32, error) {
	var s *btf.Struct
	if err := spec.TypeByName(structName, &s); err != nil {
		return 0, err
	}
	var typ btf.Type = s
	var total uint32
	for _, name := range strings.Split(path, ".") {
		off, mt, ok := findMember(typ, name)
		if !ok {
			return 0, fmt.Errorf("no member %q", name)
		}
		total += off
		typ = mt
	}
	return int32(total), nil
}

func findMember(typ btf.Type, name string) (uint32, btf.Type, bool) {
	var members []btf.Member
	switch t := btf.UnderlyingType(typ).(type) {
	case *btf.Struct:
		members = t.Members
	case *btf.Union:
		members = t.Members
	default:
		return 0, nil, false
	}
	for _, m := range members {
		if m.BitfieldSize != 0 {
			continue
		}
		if m.Name == name {
			return m.Offset.Bytes(), m.Type, true
		}
		if m.Name == "" {
			if off, mt, ok := findMember(m.Type, name); ok {
				return m.Offset.Bytes() + off, mt, true
			}
		}
	}
	return 0, nil, false
}
