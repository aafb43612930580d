package flame

import (
	"bytes"
	"strings"
	"testing"
)

func TestFoldedRoundTrip(t *testing.T) {
	f := Folded{}
	f.Add([]string{"main", "run", "work"}, 3)
	f.Add([]string{"main", "a;b", "x\ny"}, 2) // ';' and line breaks would break the format
	f.Add([]string{"main", ""}, 1)
	f.Add([]string{"main", "run", "work"}, 4)
	var b bytes.Buffer
	if _, err := f.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	want := "main;[unknown] 1\nmain;a:b;x y 2\nmain;run;work 7\n"
	if b.String() != want {
		t.Fatalf("folded:\n%s\nwant:\n%s", b.String(), want)
	}
	g, err := ReadFolded(strings.NewReader("# comment\n\n" + b.String() + "main;run;work 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if g["main;run;work"] != 8 || g.Total() != 11 || len(g) != 3 {
		t.Fatalf("read back %v (total %d)", g, g.Total())
	}
	g.Merge(f)
	if g["main;run;work"] != 15 || g.Total() != 21 {
		t.Fatalf("merged %v (total %d)", g, g.Total())
	}
}

func TestReadFoldedErrors(t *testing.T) {
	for _, in := range []string{"a;b\n", "a;b x\n", "a;b -3\n", " 4\n"} {
		if _, err := ReadFolded(strings.NewReader("ok 1\n" + in)); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("ReadFolded(%q): error %v, want one naming line 2", in, err)
		}
	}
}
