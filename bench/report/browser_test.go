//go:build linux

package report_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench/report"
	"kquic.dev/bench/results"
	"kquic.dev/internal/browser"
	"kquic.dev/internal/testenv"
)

// inPage is what the browser is asked about the loaded page: per run the
// cells whose rows are rendered (visible, showing their key) and the cells
// its figures draw, every image with whether it decoded, the compared
// cells, the flamegraphs, and every resource the page fetched.
const inPage = `(() => ({
  runs: [...document.querySelectorAll("section.run")].map(s => ({
    name: s.dataset.run,
    rows: [...s.querySelectorAll("tr[data-cell]")].filter(r => r.getClientRects().length > 0 && r.innerText.includes(r.dataset.cell)).map(r => r.dataset.cell),
    plotted: [...s.querySelectorAll("figure[data-cells]")].filter(f => f.querySelector("img").naturalWidth > 0).flatMap(f => f.dataset.cells.split(" ")),
    tabled: [...s.querySelectorAll("table.goodput td[data-goodput-cell]")].filter(c => c.getClientRects().length > 0 && c.innerText.trim() != "").map(c => c.dataset.goodputCell),
    explained: [...s.querySelectorAll("table.explain tr[data-explain-cell]")].filter(r => r.getClientRects().length > 0).map(r => r.dataset.explainCell),
    tables: s.querySelectorAll("table.goodput").length,
    textShown: [...s.querySelectorAll("pre")].filter(p => p.checkVisibility()).length,
    ellipses: [...s.querySelectorAll("td")].filter(c => c.innerText.trim() == "…").length,
  })),
  width: document.documentElement.scrollWidth,
  viewport: document.documentElement.clientWidth,
  images: [...document.images].map(i => ({alt: i.alt, ok: i.complete && i.naturalWidth > 0 && i.getBoundingClientRect().width > 0})),
  compared: [...document.querySelectorAll("tr[data-compare-cell]")].map(r => r.dataset.compareCell),
  flames: [...document.querySelectorAll("#flames img")].filter(i => i.naturalWidth > 0).length,
  resources: performance.getEntriesByType("resource").map(e => e.name),
}))()`

type pageState struct {
	Runs []struct {
		Name      string
		Rows      []string
		Plotted   []string
		Tabled    []string
		Explained []string
		Tables    int
		TextShown int
		Ellipses  int
	}
	Width, Viewport int
	Images          []struct {
		Alt string
		OK  bool
	}
	Compared  []string
	Flames    int
	Resources []string
}

// pageWidth is the window the page must fit: a laptop's browser.
const pageWidth = 1400

// check loads the page in Chromium in a window pageWidth pixels wide and
// lists what is wrong with it: any console error, exception or failed
// load, a resource fetched, an image that did not decode, a page wider than
// the window, a cell of a run without its row or (measured) without a
// figure drawing it, a bulk run's cell without its value in an HTML goodput
// table, a bulk run's tables shown as text, a "…" for a value, a cell with
// counters without its row in the counters table, a compared cell without
// its row, flamegraphs missing.
func check(t *testing.T, bin, path string, p *report.Page, runs []report.Run, flames int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := browser.LoadWith(ctx, bin, "file://"+path, inPage, browser.Options{Width: pageWidth, Height: 2000})
	if err != nil {
		t.Fatal(err)
	}
	var s pageState
	if err := json.Unmarshal(res.Value, &s); err != nil {
		t.Fatalf("the page's state %s: %v", res.Value, err)
	}
	var probs []string
	for _, e := range res.Errors {
		probs = append(probs, "browser: "+e)
	}
	for _, r := range s.Resources {
		probs = append(probs, "fetched "+r)
	}
	for _, i := range s.Images {
		if !i.OK {
			probs = append(probs, "image not shown: "+i.Alt)
		}
	}
	if s.Width > pageWidth || s.Viewport > pageWidth || s.Viewport < pageWidth-30 {
		probs = append(probs, fmt.Sprintf("the page is %d pixels wide in a window of %d (%d inside): it runs off the page", s.Width, pageWidth, s.Viewport))
	}
	if len(s.Runs) != len(runs) {
		return append(probs, fmt.Sprintf("%d runs shown, want %d", len(s.Runs), len(runs)))
	}
	for i, r := range runs {
		shown := s.Runs[i]
		bulk := r.Doc.Spec.Mode.IsDefault()
		if bulk && (shown.Tables == 0 || shown.TextShown > 0) {
			probs = append(probs, fmt.Sprintf("%s: %d HTML goodput tables, %d text blocks shown", r.Name, shown.Tables, shown.TextShown))
		}
		if shown.Ellipses > 0 {
			probs = append(probs, fmt.Sprintf("%s: %d cells show \"…\"", r.Name, shown.Ellipses))
		}
		for _, c := range r.Doc.Cells {
			if !slices.Contains(shown.Rows, c.Key) {
				probs = append(probs, fmt.Sprintf("%s: no row for %s", r.Name, c.Key))
			}
			if c.Status == results.StatusOK && len(c.Samples) > 0 && !slices.Contains(shown.Plotted, c.Key) {
				probs = append(probs, fmt.Sprintf("%s: no figure draws %s", r.Name, c.Key))
			}
			// n/a cells of a transport that has none other in its table
			// have no column there, as in the text tables.
			if bulk && c.Status != results.StatusNA && !slices.Contains(shown.Tabled, c.Key) {
				probs = append(probs, fmt.Sprintf("%s: no goodput table shows %s", r.Name, c.Key))
			}
			if bulk && c.Status == results.StatusOK && len(c.Samples) > 0 && c.Samples[0].Counters != nil && !slices.Contains(shown.Explained, c.Key) {
				probs = append(probs, fmt.Sprintf("%s: the counters table has no row for %s", r.Name, c.Key))
			}
		}
	}
	var want []string
	for _, c := range p.Comparisons {
		if c.Cmp != nil {
			for _, cc := range c.Cmp.Cells {
				want = append(want, cc.Key)
			}
		}
	}
	if !slices.Equal(s.Compared, want) {
		probs = append(probs, fmt.Sprintf("compared rows %d, want %d", len(s.Compared), len(want)))
	}
	if s.Flames != flames {
		probs = append(probs, fmt.Sprintf("%d flamegraphs shown, want %d", s.Flames, flames))
	}
	return probs
}

func writePage(t *testing.T, p *report.Page) (string, string) {
	t.Helper()
	var b strings.Builder
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, b.String()
}

// TestPageInBrowser: the report of real results files, and of two synthetic
// runs compared with a flamegraph attached, loads in headless Chromium with
// no console error and no fetch, every image decoded, every cell's row and
// figure shown; and the same check fails on pages broken in each of those
// ways.
func TestPageInBrowser(t *testing.T) {
	testenv.HostOnly(t, "a browser under emulation takes minutes; the page does not depend on the kernel")
	bin := testenv.Tool(t, "chromium", "chromium")

	real, err := filepath.Glob("testdata/*.json")
	if err != nil || len(real) == 0 {
		t.Fatalf("no results files in testdata: %v", err)
	}
	realRuns, err := report.Load(real)
	if err != nil {
		t.Fatal(err)
	}
	flame := report.Figure{Title: "flamegraph", SVG: []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="200" height="20"><rect width="200" height="20" fill="#e86"/><text y="15">main</text></svg>`)}
	synth := []report.Run{{Name: "old.json", Doc: synthetic(1, 5, means)}, {Name: "new.json", Doc: synthetic(2, 5, map[string]float64{"kquic": 110, "ktls": 300, "tcp": 500})}}

	for _, tc := range []struct {
		name   string
		runs   []report.Run
		flames []report.Figure
	}{{"real", realRuns, nil}, {"synthetic", synth, []report.Figure{flame}}} {
		p, err := report.Build(tc.runs, report.Options{Flames: tc.flames})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Comparisons {
			// The guest runs compare; the host run is refused against
			// them (another CPU and machine kind), with the reason.
			host := strings.Contains(c.New, "host-")
			if host != (c.Err != "") || host != (c.Cmp == nil || len(c.Cmp.Cells) == 0) || !host && len(c.Figures) == 0 {
				t.Errorf("%s: %s against %s: error %q, %d figures", tc.name, c.New, c.Old, c.Err, len(c.Figures))
			}
		}
		path, html := writePage(t, p)
		if probs := check(t, bin, path, p, tc.runs, len(tc.flames)); len(probs) > 0 {
			t.Errorf("%s: %d problems:\n%s", tc.name, len(probs), strings.Join(probs, "\n"))
		}
		if tc.name != "synthetic" {
			continue
		}
		// The same check on broken pages must fail.
		i := strings.Index(html, "base64,") + len("base64,")
		row := `data-cell="` + tc.runs[1].Doc.Cells[3].Key + `"`
		for what, broken := range map[string]string{
			"a console error":    strings.Replace(html, "</body>", `<script>console.error("broken")</script></body>`, 1),
			"a corrupt figure":   html[:i] + "AAAA" + html[i+40:],
			"a fetch":            strings.Replace(html, "</head>", `<link rel="stylesheet" href="https://example.invalid/x.css"></head>`, 1),
			"a cell row missing": strings.Replace(html, row, `data-cell="renamed"`, 1),
			"a hidden row":       strings.Replace(html, "</style>", "tr.ok:nth-child(5) { display: none; }</style>", 1),
			"no flamegraph":      strings.Replace(html, `<section id="flames">`, `<section id="noflames">`, 1),
			"a table too wide":   strings.Replace(html, `<table class="cells">`, `<table class="cells"><tr><td style="white-space: nowrap">`+strings.Repeat("wide ", 400)+`</td></tr>`, 1),
			"text tables":        strings.Replace(html, `<details><summary>The tables as`, `<details open><summary>The tables as`, 1),
			"a goodput missing":  strings.Replace(html, `data-goodput-cell="`+tc.runs[1].Doc.Cells[3].Key+`">`, `>`, 1),
		} {
			if broken == html {
				t.Fatalf("%s: the page did not change", what)
			}
			os.WriteFile(path, []byte(broken), 0o644)
			probs := check(t, bin, path, p, tc.runs, len(tc.flames))
			if len(probs) == 0 {
				t.Errorf("a page with %s passes the check", what)
			}
			t.Logf("with %s: %q", what, probs)
		}
	}
}
