package matrix

import (
	"runtime"
	"testing"
)

func TestParseAffinity(t *testing.T) {
	for _, s := range []string{"off", ""} {
		if a, err := ParseAffinity(s); a != nil || err != nil {
			t.Errorf("ParseAffinity(%q) = %v, %v", s, a, err)
		}
	}
	a, err := ParseAffinity("auto")
	if err != nil {
		t.Fatal(err)
	}
	if runtime.NumCPU() >= 2 && (a == nil || a.Client == a.Server) {
		t.Errorf("auto on %d CPUs: %v", runtime.NumCPU(), a)
	}
	if a, err := ParseAffinity("0,0"); err != nil || a.Client != 0 || a.Server != 0 {
		t.Errorf("0,0: %v, %v", a, err)
	}
	for _, bad := range []string{"1", "a,b", "-1,0", "0,4096"} {
		if _, err := ParseAffinity(bad); err == nil {
			t.Errorf("ParseAffinity(%q) accepted", bad)
		}
	}
}
