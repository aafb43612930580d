package ratio

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"kquic.dev/bench/reference"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// goldenTable is a QUIC / kTLS table from fixed samples (Mbit/s) beside the
// README's ratios: a full row, a GSO-off row with a one-sample cell and a
// cell not measured.
func goldenTable(t *testing.T) Table {
	ref := &reference.ReadmeKTLS
	tab := Table{Title: "kquic / ktls", Columns: []string{"1 KiB", "64 KiB"}, RefNames: []string{"README 2024"}, Emulated: true}
	samples := map[bool][2]Cells{
		true: {
			{Num: []float64{47, 45, 49}, Den: []float64{98, 101, 95}},
			{Num: []float64{410, 425, 398, 431}, Den: []float64{870, 905, 880, 861}},
		},
		false: {
			{Num: []float64{47, 45, 49}, Den: []float64{61}},
			{},
		},
	}
	for _, gso := range []bool{true, false} {
		row := Row{Label: RowLabel(1500, gso)}
		for i, size := range []int{1024, 65536} {
			var c Cell
			v, ok := ref.Ratio(1500, size, gso)
			c.Refs = []Ref{{v, ok}}
			s := samples[gso][i]
			if s.Num == nil {
				c.Missing = "ktls with GSO off was not measured (--gso on)"
			} else {
				r, err := Of(s.Num, s.Den)
				if err != nil {
					t.Fatal(err)
				}
				c.Ratio = r
			}
			row.Cells = append(row.Cells, c)
		}
		tab.Rows = append(tab.Rows, row)
	}
	return tab
}

func TestWriteTextGolden(t *testing.T) {
	var b bytes.Buffer
	if err := goldenTable(t).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	const path = "testdata/table.golden"
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run Golden -update writes it)", err)
	}
	if b.String() != string(want) {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasSuffix(line, " ") || strings.Contains(line, "NaN") {
			t.Errorf("line %q has trailing blanks or NaN", line)
		}
	}
}
