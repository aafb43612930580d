package matrix_test

import (
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/native"
)

func TestDriverKeys(t *testing.T) {
	s := matrix.DefaultSpec()
	s.Transports = []string{"kquic"}
	goOnly := s.Cells()
	s.Drivers = []matrix.Driver{matrix.DriverGo, native.Name}
	both := s.Cells()
	if len(both) != 2*len(goOnly) {
		t.Fatalf("go,native: %d cells, want %d", len(both), 2*len(goOnly))
	}
	for i, c := range goOnly {
		g, n := both[2*i], both[2*i+1]
		if g.Key() != c.Key() || g.Driver != "" {
			t.Errorf("the go cell's key changed with native beside it: %q, was %q", g.Key(), c.Key())
		}
		if n.Key() != c.Key()+"/driver=native" || n.ColumnName() != "kquic(C)" {
			t.Errorf("native cell: key %q column %q", n.Key(), n.ColumnName())
		}
	}
	s.Drivers = []matrix.Driver{"rust"}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), `driver "rust"`) {
		t.Errorf("driver rust: %v", err)
	}
}
