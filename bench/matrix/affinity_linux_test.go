package matrix

import (
	"runtime"
	"testing"
)

func TestParseAffinity(t *testing.T) {
	for _, s := range []string{"off", "none", ""} {
		if a, err := ParseAffinity(s); a != nil || err != nil {
			t.Errorf("ParseAffinity(%q) = %v, %v", s, a, err)
		}
	}
	a, err := ParseAffinity("auto")
	if err != nil {
		t.Fatal(err)
	}
	if runtime.NumCPU() >= 2 && (a == nil || a.Client == a.Server || len(a.Usable) != runtime.NumCPU()) {
		t.Errorf("auto on %d CPUs: %v (usable %v)", runtime.NumCPU(), a, a.Usable)
	}
	if a, err := ParseAffinity("0,0"); err != nil || a.Client != 0 || a.Server != 0 || a.Pairs != nil {
		t.Errorf("0,0: %v, %v", a, err)
	}
	if runtime.NumCPU() >= 2 {
		a, err := ParseAffinity("0,1/1,0")
		if err != nil || a.Client != 0 || a.Server != 1 || len(a.Pairs) != 2 || a.Pairs[1] != (CPUPair{1, 0}) {
			t.Errorf("0,1/1,0: %+v, %v", a, err)
		}
	}
	for _, bad := range []string{"1", "a,b", "-1,0", "0,4096", "0,0/", "0,0/1"} {
		if _, err := ParseAffinity(bad); err == nil {
			t.Errorf("ParseAffinity(%q) accepted", bad)
		}
	}
}
