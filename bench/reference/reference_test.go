package reference

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// parse reads a table as the module's author published it: a "UNIT
// size:N ..." header, a "Gbits/sec NUM | DEN ..." header, "mtu:N a | b
// c | d ..." rows and "no GSO | b | d ..." rows (the denominator with GSO
// off, below its MTU's row); rules between rows are skipped.
func parse(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t := &Table{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.ReplaceAll(sc.Text(), "|", " "))
		switch {
		case len(fields) == 0:
		case fields[0] == "UNIT":
			for _, s := range fields[1:] {
				n, err := strconv.Atoi(strings.TrimPrefix(s, "size:"))
				if err != nil {
					return nil, fmt.Errorf("%s: size %q: %v", path, s, err)
				}
				t.Sizes = append(t.Sizes, n)
			}
		case fields[0] == "Gbits/sec":
			t.Num, t.Den = fields[1], fields[2]
		case strings.HasPrefix(fields[0], "mtu:"):
			mtu, err := strconv.Atoi(strings.TrimPrefix(fields[0], "mtu:"))
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %v", path, fields[0], err)
			}
			v, err := floats(fields[1:])
			if err != nil || len(v) != 2*len(t.Sizes) {
				return nil, fmt.Errorf("%s: row %q: %d figures, %v", path, sc.Text(), len(v), err)
			}
			r := Row{MTU: mtu, GSO: true}
			for i := 0; i < len(v); i += 2 {
				r.Num, r.Den = append(r.Num, v[i]), append(r.Den, v[i+1])
			}
			t.Rows = append(t.Rows, r)
		case fields[0] == "no" && fields[1] == "GSO":
			v, err := floats(fields[2:])
			if err != nil || len(v) != len(t.Sizes) || len(t.Rows) == 0 {
				return nil, fmt.Errorf("%s: no-GSO row %q: %v", path, sc.Text(), err)
			}
			t.Rows = append(t.Rows, Row{MTU: t.Rows[len(t.Rows)-1].MTU, Den: v})
		}
	}
	return t, sc.Err()
}

func floats(fields []string) ([]float64, error) {
	var v []float64
	for _, s := range fields {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, err
		}
		v = append(v, x)
	}
	return v, nil
}

// TestFiguresMatchSources checks every table against the text it was
// taken from (testdata: the tables as published, cut from the README at
// each commit and from the cover letter).
func TestFiguresMatchSources(t *testing.T) {
	for file, want := range map[string]*Table{
		"readme-011c7b3-ktls.txt": &ReadmeKTLS,
		"readme-011c7b3-tcp.txt":  &ReadmeTCP,
		"readme-82793aa-ktls.txt": &ReadmeKTLS20240408,
		"readme-0fb4ebc-ktls.txt": &ReadmeKTLS20240407,
		"v9-cover-ktls.txt":       &CoverV9KTLS,
		"v9-cover-tcp.txt":        &CoverV9TCP,
	} {
		got, err := parse("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		if got.Den != want.Den || !strings.HasPrefix(want.Num, got.Num) {
			t.Errorf("%s: columns %s | %s, data says %s | %s", file, got.Num, got.Den, want.Num, want.Den)
		}
		if !reflect.DeepEqual(got.Sizes, want.Sizes) || !reflect.DeepEqual(got.Rows, want.Rows) {
			t.Errorf("%s: published\n%v %+v\ndata\n%v %+v", file, got.Sizes, got.Rows, want.Sizes, want.Rows)
		}
		if c := want.Source.Commit; c != "" && !strings.Contains(file, c[:7]) || !strings.Contains(want.Source.URL, c) {
			t.Errorf("%s: source %+v does not name the commit the excerpt is from", file, want.Source)
		}
	}
	if len(Tables) != 6 {
		t.Errorf("Tables lists %d tables, want all 6", len(Tables))
	}
}

// TestRatios checks the ratios readers quote, computed by hand from the
// README's figures: QUIC at about half of kTLS at 64 KiB and MTU 1500, the
// gap nearly closed with kTLS's GSO off.
func TestRatios(t *testing.T) {
	for _, c := range []struct {
		tab       *Table
		mtu, size int
		gso       bool
		want      float64
	}{
		{&ReadmeKTLS, 1500, 65536, true, 3.83 / 7.95},
		{&ReadmeKTLS, 1500, 65536, false, 3.83 / 4.28},
		{&ReadmeKTLS, 9000, 1024, false, 2.17 / 2.30},
		{&ReadmeTCP, 9000, 16384, true, 14.7 / 20.3},
		{&ReadmeTCP, 1500, 4096, false, 3.59 / 4.12},
		{&CoverV9KTLS, 1500, 65536, true, 3.48 / 10.8},
		{&CoverV9TCP, 9000, 65536, true, 13.5 / 39.2},
	} {
		got, ok := c.tab.Ratio(c.mtu, c.size, c.gso)
		if !ok || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s/%s mtu %d size %d gso %v: %v %v, want %v", c.tab.Num, c.tab.Den, c.mtu, c.size, c.gso, got, ok, c.want)
		}
	}
	if _, ok := CoverV9KTLS.Ratio(1500, 65536, false); ok {
		t.Error("the v9 cover letter has no no-GSO rows, yet a no-GSO ratio came out")
	}
	if _, ok := ReadmeKTLS.Ratio(1500, 2048, true); ok {
		t.Error("a size the table does not have gave a ratio")
	}
	if g, ok := ReadmeTCP.GSOEffect(1500, 65536); !ok || math.Abs(g-5.04/16.2) > 1e-12 {
		t.Errorf("TCP GSO off over on at 1500/64K: %v %v, want %v", g, ok, 5.04/16.2)
	}
}
