package profile

import (
	"strings"
	"testing"

	"kquic.dev/bench/flame"
)

const kallsymsText = `ffffffff81000000 T _stext
ffffffff81000100 t do_one_initcall
ffffffff82000000 D some_data
ffffffffc0a01000 t quic_packet_rcv	[quic]
ffffffffc0a01400 t quic_frame_process	[quic]
ffffffffc0b00000 t nfs4_proc_read	[nfsv4]
0000000000000000 t hidden_symbol
`

// perf named the QUIC module's frames "[nfsv4]", unnamed; the kernel's own
// table names them.
func TestKallsymsNamesPerfsUnnamedFrames(t *testing.T) {
	k, err := readKallsyms(strings.NewReader(kallsymsText))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		addr uint64
		want string
		ok   bool
	}{
		{0xffffffffc0a01010, "quic_packet_rcv", true},
		{0xffffffffc0a01400, "quic_frame_process", true},
		{0xffffffffc0b00020, "nfs4_proc_read", true},
		{0xffffffff81000180, "do_one_initcall", true},
		{0xffffffff80000000, "", false},                 // below every symbol
		{0xffffffffc0b00000 + maxSymbolSize, "", false}, // past any function
	} {
		if got, ok := k.lookup(tc.addr); got != tc.want || ok != tc.ok {
			t.Errorf("lookup(%#x) = %q, %v; want %q, %v", tc.addr, got, ok, tc.want, tc.ok)
		}
	}
	script := "kqbench 100/101 [001] 12.500000: 10101010 cpu-clock:\n" +
		"\tffffffffc0a01410 [unknown] ([nfsv4])\n" +
		"\tffffffffc0a01010 [unknown] ([nfsv4])\n" +
		"\tffffffff81000180 do_one_initcall+0x80 ([kernel.kallsyms])\n\n"
	f, _, err := flame.ParsePerfScript(strings.NewReader(script), flame.ScriptOptions{Resolve: k.lookup})
	if err != nil {
		t.Fatal(err)
	}
	want := "kqbench;do_one_initcall_[k];quic_packet_rcv_[k];quic_frame_process_[k]"
	if f[want] != 1 {
		t.Errorf("folded %v, want %q", f, want)
	}
	if _, err := readKallsyms(strings.NewReader("zzzz T bad\n")); err == nil {
		t.Error("a line with a bad address: no error")
	}
}
