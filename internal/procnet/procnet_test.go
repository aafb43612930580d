package procnet

import (
	"strings"
	"testing"
)

func TestParseNameValue(t *testing.T) {
	m, err := ParseNameValue(strings.NewReader("TlsCurrTxSw   3\n\nQuicPktRcvDrop\t18446744073709551615\n"))
	if err != nil || m["TlsCurrTxSw"] != 3 || m["QuicPktRcvDrop"] != 1<<64-1 || len(m) != 2 {
		t.Fatalf("ParseNameValue = %v, %v", m, err)
	}
	for _, bad := range []string{"A 1 2\n", "A x\n", "A -1\n"} {
		if _, err := ParseNameValue(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("ParseNameValue(%q) = %v, want an error naming line 1", bad, err)
		}
	}
}

func TestParseCounters(t *testing.T) {
	in := "Udp: InDatagrams NoPorts RcvbufErrors\nUdp: 10 2 3\nTlsCurrTxSw                     \t4\n"
	got := ParseCounters([]byte(in))
	want := map[string]int64{"Udp.InDatagrams": 10, "Udp.NoPorts": 2, "Udp.RcvbufErrors": 3, "TlsCurrTxSw": 4}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
}
