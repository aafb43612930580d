package flame

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// A few samples in perf script's default form and with -F fields, written
// out as perf 6.1 prints them.
const scriptSample = `kqbench   119/121   [001]   100.500000:    1001001 cpu-clock: 
	ffffffffc0a01234 quic_packet_xmit+0x44 ([quic])
	ffffffffc0a05678 quic_sendmsg+0x1a0 ([quic])
	ffffffff81a00000 __sys_sendmsg+0x80 ([kernel.kallsyms])
	          4a1b2c syscall.RawSyscall+0x20 (/usr/bin/kqbench)
	          401000 runtime.goexit.abi0+0x1 (/usr/bin/kqbench)

:122   119/122   [000]   100.700000:    1001001 cpu-clock: 
	ffffffffc0a01234 quic_packet_xmit+0x44 ([quic])
	          4a1b2c [unknown] (/usr/bin/kqbench)

swapper     0 [000]   101.500000:    1001001 cpu-clock: 
	ffffffff81b00000 default_idle+0x5 ([kernel.kallsyms])
	ffffffff81b00100 [unknown] ([unknown])

Web Content  4242 [001] 102.000000: cpu-clock: 
	    7f0000001000 [unknown] ([vdso])

:-1 15355/-1    [000] 102.100000: cpu-clock: 
	ffffffff81b00000 default_idle+0x5 ([kernel.kallsyms])

this is no header
	ffffffff81b00000 default_idle+0x5 ([kernel.kallsyms])

`

func TestParsePerfScript(t *testing.T) {
	f, st, err := ParsePerfScript(strings.NewReader(scriptSample), ScriptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := Folded{
		"kqbench;runtime.goexit.abi0;syscall.RawSyscall;__sys_sendmsg_[k];quic_sendmsg_[k];quic_packet_xmit_[k]": 1,
		"kqbench;[kqbench];quic_packet_xmit_[k]": 1,
		"swapper;[unknown];default_idle_[k]":     1,
		"Web Content;[vdso]":                     1,
		":-1;default_idle_[k]":                   1,
	}
	if len(f) != len(want) {
		t.Errorf("folded %d stacks, want %d", len(f), len(want))
	}
	for s, n := range want {
		if f[s] != n {
			t.Errorf("stack %q: %d samples, want %d (have %v)", s, f[s], n, f)
		}
	}
	if st.Samples != 5 || st.First != 100.5 || st.Last != 102.1 || st.Unparsed != 1 {
		t.Errorf("stats %+v, want 5 samples from 100.5 to 102.1, 1 header unparsed", st)
	}
	// The window [100.6, 101.5) holds the second sample only.
	f, st, err = ParsePerfScript(strings.NewReader(scriptSample), ScriptOptions{From: 100.6, To: 101.5, NoComm: true})
	if err != nil {
		t.Fatal(err)
	}
	if f.Total() != 1 || f["[kqbench];quic_packet_xmit_[k]"] != 1 || st.Outside != 4 {
		t.Errorf("window: %v, %+v", f, st)
	}
	if _, _, err := ParsePerfScript(strings.NewReader("garbage here\n"), ScriptOptions{}); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("garbage: error %v, want one naming line 1", err)
	}
}

// TestParsePerfScriptGuest folds perf script's output of a real recording:
// perf record -a -g over a kquic matrix cell in the guest (kernel 7.3, the
// QUIC module loaded), trimmed.
func TestParsePerfScriptGuest(t *testing.T) {
	for _, name := range []string{"testdata/perf-script-default.txt", "testdata/perf-script-fields.txt"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			// The samples, counted apart from the parser: lines that start
			// a block.
			var headers int64
			sc := bufio.NewScanner(strings.NewReader(string(b)))
			prevBlank := true
			for sc.Scan() {
				l := sc.Text()
				if prevBlank && l != "" && l[0] != ' ' && l[0] != '\t' {
					headers++
				}
				prevBlank = strings.TrimSpace(l) == ""
			}
			f, st, err := ParsePerfScript(strings.NewReader(string(b)), ScriptOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if st.Samples != headers || f.Total() != headers {
				t.Fatalf("folded %d samples (stats %d), the file has %d", f.Total(), st.Samples, headers)
			}
			var quic, offsets int64
			for s, n := range f {
				if strings.Contains(s, "+0x") {
					offsets += n
				}
				for _, fr := range strings.Split(s, ";") {
					if strings.HasPrefix(fr, "quic_") && strings.HasSuffix(fr, "_[k]") {
						quic += n
						break
					}
				}
			}
			if quic == 0 {
				t.Errorf("no stack holds a quic_ module frame:\n%v", f)
			}
			if offsets != 0 {
				t.Errorf("%d samples kept a symbol offset", offsets)
			}
			// Splitting by time at the median partitions the samples.
			mid := (st.First + st.Last) / 2
			parts, _, err := SplitPerfScript(strings.NewReader(string(b)), func(ts float64) (string, bool) {
				if ts < mid {
					return "early", true
				}
				return "late", true
			}, ScriptOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if parts["early"].Total()+parts["late"].Total() != headers || parts["early"].Total() == 0 || parts["late"].Total() == 0 {
				t.Errorf("split at %.6f: %d + %d samples of %d", mid, parts["early"].Total(), parts["late"].Total(), headers)
			}
		})
	}
}
