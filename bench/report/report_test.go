package report_test

import (
	"bytes"
	stdhtml "html"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/report"
	"kquic.dev/bench/results"
)

// synthetic is a run of kquic, ktls and tcp over three sizes, MTU 1500,
// GSO on and off, encryption on and off (tcp only off, the others' n/a
// cells included), with n repeats of goodput mean[t] × size/1K Mbit/s and
// --explain counters.
func synthetic(seed uint64, n int, mean map[string]float64) *results.Document {
	rnd := rand.New(rand.NewPCG(seed, 3))
	spec := matrix.Spec{Transports: []string{"kquic", "ktls", "tcp"}, Sizes: []int{1 << 10, 16 << 10, 64 << 10},
		MTUs: []int{1500}, GSO: []bool{true, false}, Crypto: []bool{true, false}, Directions: []matrix.Direction{matrix.Up}, Streams: 1, Repeat: n}
	d := &results.Document{Schema: results.SchemaVersion, Spec: spec, Complete: true, Command: []string{"kqbench", "matrix", "--explain"}}
	d.Env.CPUModel, d.Env.CPUs, d.Env.Kernel, d.Env.Machine.Kind = "test CPU", 2, "7.3.4+deb13-amd64", results.MachineEmulated
	for _, c := range spec.Cells() {
		r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK, Offloads: "mtu=1500; x"}
		if c.Transport == "tcp" && c.Crypto || c.Transport == "ktls" && !c.Crypto {
			r.Status, r.Note = results.StatusNA, "n/a: no such mode"
			d.Cells = append(d.Cells, r)
			continue
		}
		for range n {
			bps := mean[c.Transport] * float64(c.Size) / 1024 * (1 + 0.02*rnd.NormFloat64()) * 1e6
			b := int64(bps / 8)
			r.Samples = append(r.Samples, results.Sample{Bytes: b, Seconds: 1, Bps: bps, CPU: results.CPU{BusyCores: 1.2},
				Counters: map[string]float64{"client.tx_packets": float64(b) / 1200, "server.rx_packets": float64(b) / 1200,
					"client.syscalls": 100, "server.syscalls": 80, "client.syscall.sendmsg": 50, "client.drops": 0, "server.drops": 0}})
		}
		r.Summarize()
		d.Cells = append(d.Cells, r)
	}
	return d
}

var means = map[string]float64{"kquic": 100, "ktls": 300, "tcp": 500}

func build(t *testing.T, runs []report.Run, o report.Options) (*report.Page, string) {
	t.Helper()
	p, err := report.Build(runs, o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return p, b.String()
}

var attrURL = regexp.MustCompile(`(?:src|href)="([^"]*)"`)

// TestPageSelfContained: the page of two runs has every cell of each, the
// figures, the comparison, and refers to nothing but data: URIs and its
// own anchors.
func TestPageSelfContained(t *testing.T) {
	old := synthetic(1, 5, means)
	new := synthetic(2, 5, map[string]float64{"kquic": 115, "ktls": 300, "tcp": 500})
	p, html := build(t, []report.Run{{Name: "old.json", Doc: old}, {Name: "new.json", Doc: new}}, report.Options{})
	for _, m := range attrURL.FindAllStringSubmatch(html, -1) {
		if u := stdhtml.UnescapeString(m[1]); !strings.HasPrefix(u, "data:image/svg+xml;base64,") && !strings.HasPrefix(u, "#") {
			t.Errorf("the page refers to %.80q", u)
		}
	}
	for _, d := range []*results.Document{old, new} {
		for _, c := range d.Cells {
			if n := strings.Count(html, `data-cell="`+c.Key+`"`); n != 2 {
				t.Errorf("cell %s has %d rows, want one in each run's table", c.Key, n)
			}
		}
	}
	if len(p.Runs) != 2 || len(p.Comparisons) != 1 {
		t.Fatalf("%d runs, %d comparisons", len(p.Runs), len(p.Comparisons))
	}
	var names []string
	for _, f := range p.Runs[0].Figures {
		names = append(names, f.Name)
	}
	for _, want := range []string{"goodput-up", "cpu-up", "sender-packets-up", "syscalls-up"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("run figures %v lack %s", names, want)
		}
	}
	c := p.Comparisons[0]
	if c.Err != "" || c.Cmp == nil || len(c.Cmp.Cells) != 24 || len(c.Figures) != 1 {
		t.Fatalf("comparison: err %q, %d figures", c.Err, len(c.Figures))
	}
	for _, cc := range c.Cmp.Cells {
		sig := strings.Contains(html, `<tr class="sig" data-compare-cell="`+cc.Key+`">`)
		if (cc.Transport == "kquic") != sig {
			t.Errorf("%s: shown significant %v, change %+.1f%% p %.3f", cc.Key, sig, cc.Goodput.ChangePct, cc.Goodput.P)
		}
	}
	for _, s := range []string{"machine: emulated CPU", "Counters per MB", "7.3.4+deb13-amd64", "new.json against old.json"} {
		if !strings.Contains(stdhtml.UnescapeString(html), s) {
			t.Errorf("the page lacks %q", s)
		}
	}
	if strings.Contains(html, `id="flames"`) {
		t.Errorf("a flamegraph section without flamegraphs")
	}
}

// TestFlames: extra figures get a section of their own.
func TestFlames(t *testing.T) {
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>`)
	_, html := build(t, []report.Run{{Name: "a.json", Doc: synthetic(1, 3, means)}},
		report.Options{Flames: []report.Figure{{Title: "kquic 64 KiB: on-CPU", SVG: svg}}})
	if !strings.Contains(html, `<section id="flames">`) || !strings.Contains(html, "kquic 64 KiB: on-CPU") || strings.Count(html, `class="flame"`) != 1 {
		t.Errorf("no flamegraph section with the figure")
	}
}

// TestNothingInCommon: runs with no cell in common are both shown, and the
// comparison says why it has nothing; runs on different machines are not
// compared without Force, which compares them and lists how they differ.
func TestNothingInCommon(t *testing.T) {
	a := synthetic(1, 3, means)
	b := synthetic(2, 3, means)
	b.Spec.MTUs = []int{9000}
	for i := range b.Cells {
		b.Cells[i].MTU = 9000
		b.Cells[i].Key = b.Cells[i].Cell.Key()
	}
	p, html := build(t, []report.Run{{Name: "a.json", Doc: a}, {Name: "b.json", Doc: b}}, report.Options{})
	if c := p.Comparisons[0]; !strings.Contains(c.Err, "no measured cell in common") || len(c.Figures) != 0 {
		t.Errorf("no cell in common: %q, %d figures", c.Err, len(c.Figures))
	}
	if !strings.Contains(html, "no measured cell in common") || len(p.Runs[1].Figures) == 0 {
		t.Errorf("the page does not say so, or lost b's figures")
	}
	if !strings.Contains(html, "Only in the old run") || !strings.Contains(html, "Only in the new run") {
		t.Errorf("the cells of one run only are not listed")
	}

	b = synthetic(2, 3, means)
	b.Env.CPUModel = "another CPU"
	p, html = build(t, []report.Run{{Name: "a.json", Doc: a}, {Name: "b.json", Doc: b}}, report.Options{})
	if c := p.Comparisons[0]; !strings.Contains(c.Err, "--force") || len(c.Figures) != 0 || !strings.Contains(html, `CPU model: &#34;test CPU&#34; and &#34;another CPU&#34;`) {
		t.Errorf("different CPUs: %q, %d figures", c.Err, len(c.Figures))
	}
	p, _ = build(t, []report.Run{{Name: "a.json", Doc: a}, {Name: "b.json", Doc: b}}, report.Options{Compare: results.CompareOptions{Force: true}})
	if c := p.Comparisons[0]; c.Err != "" || len(c.Cmp.Cells) != 24 || len(c.Cmp.Differences) != 1 || len(c.Figures) != 1 {
		t.Errorf("forced: %q, %d cells, differences %q, %d figures", c.Err, len(c.Cmp.Cells), c.Cmp.Differences, len(c.Figures))
	}
}

// TestHandEdited: a file whose cells were edited by hand is shown with its
// problems listed, and what can be drawn is drawn.
func TestHandEdited(t *testing.T) {
	d := synthetic(1, 3, means)
	d.Complete = false
	var okCells []int
	for i, c := range d.Cells {
		if c.Status == results.StatusOK {
			okCells = append(okCells, i)
		}
	}
	d.Cells[okCells[0]].Samples = nil              // ok without samples
	d.Cells[okCells[1]].Size = 0                   // key no longer matches; no place on a log axis
	d.Cells[okCells[2]].Status = "great"           // unknown status
	d.Cells[okCells[3]].Samples[0].Bytes = 0       // a sample with nothing delivered
	d.Cells = append(d.Cells, d.Cells[okCells[4]]) // twice
	p, html := build(t, []report.Run{{Name: "edited.json", Doc: d}}, report.Options{})
	probs := strings.Join(p.Runs[0].Problems, "\n")
	for _, want := range []string{"did not finish", "status ok but no samples", "make the key", "message size 0", `unknown status "great"`, "has bytes 0", "appears more than once"} {
		if !strings.Contains(probs, want) {
			t.Errorf("problems %q lack %q", probs, want)
		}
	}
	if !strings.Contains(html, "Problems in this file") {
		t.Errorf("the page does not show the problems")
	}
	plotted := map[string]bool{}
	for _, f := range p.Runs[0].Figures {
		for _, c := range f.Cells {
			plotted[c] = true
		}
	}
	for _, i := range okCells[:3] {
		if plotted[d.Cells[i].Key] {
			t.Errorf("%s drawn", d.Cells[i].Key)
		}
	}
	if !plotted[d.Cells[okCells[3]].Key] || !plotted[d.Cells[okCells[5]].Key] {
		t.Errorf("the cells that can be drawn are not")
	}
}

// TestLoadBadFiles: every unreadable file is named (truncated, another
// schema, not JSON, missing), and the good ones are read.
func TestLoadBadFiles(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("testdata/host-tcp-quicgo.json")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"good.json":      good,
		"truncated.json": good[:len(good)/2],
		"v2.json":        bytes.Replace(good, []byte(`"kqbench.matrix/v1"`), []byte(`"kqbench.matrix/v2"`), 1),
		"text.json":      []byte("cell,median\n"),
	}
	var paths []string
	for name, b := range files {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		paths = append(paths, p)
	}
	paths = append(paths, filepath.Join(dir, "missing.json"))
	runs, err := report.Load(paths)
	if len(runs) != 1 || !strings.HasSuffix(runs[0].Name, "good.json") {
		t.Errorf("read %d runs, want good.json", len(runs))
	}
	for _, want := range []string{"truncated.json is not a kqbench results document: unexpected end of JSON input",
		`v2.json has schema "kqbench.matrix/v2"; this kqbench reads "kqbench.matrix/v1"`, "text.json is not a kqbench results document", "missing.json: no such file"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load error %v lacks %q", err, want)
		}
	}
}
