package tailbuf

import (
	"strings"
	"testing"
)

// TestBuffer: what is kept is the end of what was written, at least Max
// bytes and at most twice that; LastLine is its last line.
func TestBuffer(t *testing.T) {
	b := &Buffer{Max: 16}
	var all strings.Builder
	for i := range 20 {
		line := strings.Repeat(string(rune('a'+i)), 3) + "\n"
		b.Write([]byte(line))
		all.WriteString(line)
	}
	got := string(b.Bytes())
	if len(got) < 16 || len(got) > 32 || !strings.HasSuffix(all.String(), got) {
		t.Errorf("kept %q (%d bytes) of %d written, want its last 16 to 32", got, len(got), all.Len())
	}
	if l := b.LastLine(); l != "ttt" {
		t.Errorf("last line %q, want ttt", l)
	}
	var d Buffer
	d.Write(make([]byte, 3*DefaultMax))
	if n := len(d.Bytes()); n < DefaultMax || n > 2*DefaultMax {
		t.Errorf("with Max 0 it kept %d bytes, want %d to %d", n, DefaultMax, 2*DefaultMax)
	}
}
