package bulk

import (
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/send"
)

// The send methods are an axis: a cell per method, write's cells keyed and
// named as a run without --send has them, the others with /send= and a
// column "tcp+zerocopy" that reads back to its cell; a method that is not
// one, or a run without an upward direction, is refused by name.
func TestSendAxis(t *testing.T) {
	s := matrix.DefaultSpec()
	s.Transports, s.Sizes, s.MTUs, s.GSO, s.Crypto = []string{"tcp"}, []int{64 << 10}, []int{1500}, []bool{true}, []bool{false}
	plain := s.Cells()
	s.Send = []string{send.Write, send.ZeroCopy}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	cells := s.Cells()
	if len(cells) != 2*len(plain) || len(plain) != 1 {
		t.Fatalf("%d cells with two methods, %d without", len(cells), len(plain))
	}
	if cells[0].Key() != plain[0].Key() || cells[0].ColumnName() != "tcp" {
		t.Errorf("the write cell %s (%s), want %s as without --send", cells[0].Key(), cells[0].ColumnName(), plain[0].Key())
	}
	zc := cells[1]
	if !strings.HasSuffix(zc.Key(), "/send=zerocopy") || zc.ColumnName() != "tcp+zerocopy" {
		t.Errorf("the zerocopy cell %s in column %s", zc.Key(), zc.ColumnName())
	}
	if back := matrix.ColumnCell("tcp+zerocopy", plain[0]); back.Key() != zc.Key() {
		t.Errorf("column tcp+zerocopy reads back as %s, want %s", back.Key(), zc.Key())
	}
	if cols := strings.Join(s.Columns(), " "); cols != "tcp tcp+zerocopy" {
		t.Errorf("columns %q", cols)
	}
	bad := s
	bad.Send = []string{"splice"}
	bad.Directions = []matrix.Direction{matrix.Down}
	err := bad.Validate()
	for _, want := range []string{`send method "splice"`, "add --direction up"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("validation %v does not name %q", err, want)
		}
	}
}
