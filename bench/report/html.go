package report

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"kquic.dev/bench/results"
)

// HTML writes the page of the runs (see Build) to w.
func HTML(w io.Writer, runs []Run, o Options) error {
	p, err := Build(runs, o)
	if err != nil {
		return err
	}
	return p.Write(w)
}

// Write writes the page as one self-contained HTML document.
func (p *Page) Write(w io.Writer) error {
	return page.Execute(w, p)
}

var funcs = template.FuncMap{
	// svgURI is the image as a data: URI, so the page needs no other file.
	"svgURI": func(b []byte) template.URL {
		return template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(b))
	},
	"mbps": func(bps float64) string { return fmt.Sprintf("%.1f", bps/1e6) },
	"num": func(x float64) string {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "?"
		}
		return fmt.Sprintf("%.4g", x)
	},
	"pct": func(x float64) string {
		if math.IsInf(x, 0) {
			return "from 0"
		}
		return fmt.Sprintf("%+.1f%%", x)
	},
	"p": func(x float64) string {
		if math.IsNaN(x) {
			return "?"
		}
		return fmt.Sprintf("%.3f", x)
	},
	"join": strings.Join,
	// wbr lets a cell key break after each "/" when its column is narrow.
	"wbr": func(s string) template.HTML {
		parts := strings.Split(s, "/")
		for i := range parts {
			parts[i] = template.HTMLEscapeString(parts[i])
		}
		return template.HTML(strings.Join(parts, "/<wbr>"))
	},
	"inc": func(n int) int { return n + 1 },
	"hasCounters": func(c *results.Comparison) bool {
		for _, cc := range c.Cells {
			if len(cc.Counters) > 0 {
				return true
			}
		}
		return false
	},
	"busy": func(c results.CellResult) string {
		if len(c.Samples) == 0 {
			return ""
		}
		sum := 0.0
		for _, s := range c.Samples {
			sum += s.CPU.BusyCores
		}
		return fmt.Sprintf("%.2f", sum/float64(len(c.Samples)))
	},
	"spread": func(c results.CellResult) string {
		if c.Status != results.StatusOK || len(c.Samples) == 0 {
			return ""
		}
		return fmt.Sprintf("%.0f%%", c.Spread*100)
	},
	"cellWhy": func(c results.CellResult) string {
		if c.Error != "" {
			return c.Error
		}
		return c.Note
	},
}

var page = template.Must(template.New("page").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 110em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.35em; border-bottom: 1px solid #ccc; margin-top: 2em; } h3 { font-size: 1.1em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; max-width: 100%; }
p.tabletitle { font-weight: bold; margin: 1em 0 0.3em; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
thead th { background: #f3f3f3; vertical-align: bottom; }
th .unit { font-weight: normal; color: #555; font-size: 0.9em; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
td.n { white-space: nowrap; }
tbody th[scope=rowgroup], tr.group th { background: #f8f8f8; }
tr.group th { text-align: left; font-weight: normal; font-style: italic; }
table.goodput tbody, table.explain tbody { border-top: 2px solid #bbb; }
td.wide { color: #8a5a00; } td.na, td.none { color: #888; } td.fail { color: #b00; font-weight: bold; }
td.t { min-width: 12em; overflow-wrap: anywhere; } td.key { min-width: 16em; }
tr.ok td.status { color: #060; } tr.failed td.status { color: #b00; font-weight: bold; }
tr.sig td.change { font-weight: bold; }
ul.notes { font-size: 0.85em; color: #444; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
details { margin: 0.5em 0 1em; } summary { cursor: pointer; color: #345; }
.caveat { background: #fff4d6; padding: 0.4em 0.6em; border-left: 4px solid #e0a800; }
.problem, .error { background: #fde8e8; padding: 0.4em 0.6em; border-left: 4px solid #c00; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #555; }
nav ul { columns: 2; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<nav><ul>
{{range .Runs}}<li><a href="#{{.ID}}">{{.Name}}</a></li>
{{end}}{{range .Comparisons}}<li><a href="#{{.ID}}">{{.New}} against {{.Old}}</a></li>
{{end}}{{if .Flames}}<li><a href="#flames">flamegraphs</a></li>
{{end}}</ul></nav>
{{range .Runs}}{{$run := .}}
<section class="run" id="{{.ID}}" data-run="{{.Name}}">
<h2>{{.Name}}</h2>
{{range .Caveats}}<p class="caveat">{{.}}</p>
{{end}}{{if .Problems}}<div class="problem"><p>Problems in this file (the figures leave out what cannot be drawn):</p><ul>
{{range .Problems}}<li>{{.}}</li>
{{end}}</ul></div>
{{end}}
<h3>Environment</h3>
<table class="env">
{{range .Env}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{end}}</table>
<h3>Tables</h3>
{{if .GoodputTables}}{{range .GoodputTables}}<p class="tabletitle">{{.Title}}</p>
<table class="goodput">
<thead><tr><th scope="col">setting</th><th scope="col">transport</th>{{range .Sizes}}<th scope="col" class="n">{{.}}</th>{{end}}</tr></thead>
{{range .Groups}}{{$g := .}}<tbody>
{{range $i, $r := .Rows}}<tr>{{if eq $i 0}}<th scope="rowgroup" rowspan="{{len $g.Rows}}">{{$g.Label}}</th>{{end}}<th scope="row">{{$r.Column}}</th>{{range $r.Cells}}<td class="n {{.Class}}" title="{{.Title}}"{{if .Key}} data-goodput-cell="{{.Key}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
{{end}}</table>
{{end}}{{with .Notes}}<ul class="notes">
{{range .}}<li>{{.}}</li>
{{end}}</ul>
{{end}}<details><summary>The tables as <code>kqbench report</code> prints them</summary>
<pre class="tables">{{.Tables}}</pre>
</details>
{{else}}<pre class="tables">{{.Tables}}</pre>
{{end}}{{if .ExplainTable}}{{with .ExplainTable}}{{$t := .}}<h3>Counters per MB</h3>
<p class="tabletitle">Per MB delivered, means over the samples; "× the first": against the first transport of each group</p>
<table class="explain">
<thead><tr><th scope="col">transport</th>{{range .Columns}}<th scope="col" class="{{if .Text}}t{{else}}n{{end}}">{{.Name}}<br><span class="unit">{{.Unit}}</span></th>{{end}}</tr></thead>
{{range .Groups}}<tbody>
<tr class="group"><th colspan="{{inc (len $t.Columns)}}" scope="rowgroup">{{.Label}}</th></tr>
{{range .Rows}}<tr data-explain-cell="{{.Key}}"><th scope="row">{{.Column}}</th>{{range $j, $v := .Values}}<td class="{{if (index $t.Columns $j).Text}}t{{else}}n{{end}}">{{$v}}</td>{{end}}</tr>
{{end}}</tbody>
{{end}}</table>
{{with .Missing}}<ul class="notes">
{{range .}}<li>missing: {{.}}</li>
{{end}}</ul>
{{end}}{{end}}<details><summary>The counters as <code>kqbench report --explain</code> prints them</summary>
<pre class="explain">{{.Explain}}</pre>
</details>
{{else if .Explain}}<h3>Counters per MB</h3>
<pre class="explain">{{.Explain}}</pre>
{{end}}{{with .Ratios}}<h3>Ratios</h3>
<p>The ratios the module README's readers compute, each with its 95% interval from the two cells' samples, beside the README's published ratio.</p>
{{range .}}{{$t := .}}<p class="tabletitle">{{.Title}}</p>
<table class="ratios">
<thead><tr><th scope="col"></th>{{range .Columns}}<th scope="col" class="n">{{.}}</th>{{range $t.RefNames}}<th scope="col" class="n">{{.}}</th>{{end}}{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr><th scope="row">{{.Label}}</th>{{range .Cells}}<td class="n" title="{{.Missing}}">{{.Text}}</td>{{range .RefTexts $t}}<td class="n ref">{{.}}</td>{{end}}{{end}}</tr>
{{end}}</tbody></table>
{{if .Emulated}}<p class="caveat">on an emulated CPU only ratios are comparable</p>{{end}}
{{end}}{{end}}
<h3>Figures</h3>
{{range .Figures}}<figure class="plot" id="{{$run.ID}}-{{.Name}}" data-figure="{{.Name}}" data-cells="{{join .Cells " "}}">
<img src="{{svgURI .SVG}}" alt="{{.Title}}">
<figcaption>{{.Title}}</figcaption>
</figure>
{{else}}<p>No cell was measured: nothing to draw.</p>
{{end}}
<h3>Cells</h3>
<table class="cells">
<tr><th>cell</th><th>status</th><th>median Mbit/s</th><th>lowest</th><th>highest</th><th>spread</th><th>samples</th><th>busy cores</th><th>offloads</th><th>note</th></tr>
{{range .Cells}}<tr class="{{if eq .Status "ok"}}ok{{else if eq .Status "failed"}}failed{{else}}other{{end}}" data-cell="{{.Key}}">
<td class="key">{{wbr .Key}}</td><td class="status">{{.Status}}</td>{{if eq .Status "ok"}}<td class="n">{{mbps .MedianBps}}</td><td class="n">{{mbps .MinBps}}</td><td class="n">{{mbps .MaxBps}}</td>{{else}}<td></td><td></td><td></td>{{end}}<td class="n">{{spread .}}</td><td class="n">{{len .Samples}}</td><td class="n">{{busy .}}</td><td class="t">{{.Offloads}}</td><td class="t">{{cellWhy .}}</td></tr>
{{end}}</table>
</section>
{{end}}
{{range .Comparisons}}
<section class="comparison" id="{{.ID}}">
<h2>{{.New}} against {{.Old}}</h2>
<p>Per cell the two median goodputs with their 95% intervals, the change, and the p value of a Mann-Whitney U test over the repeats (results.Compare, as <code>kqbench compare</code>); "~" where the difference is not significant.</p>
{{if .Err}}<p class="error">{{.Err}}</p>
{{end}}{{with .Cmp}}{{if .Differences}}<div class="caveat"><p>The environments differ:</p><ul>
{{range .Differences}}<li>{{.}}</li>
{{end}}</ul></div>
{{end}}{{if .Cells}}<table class="compare">
<tr><th>cell</th><th>old median Mbit/s</th><th>old 95% interval</th><th>n</th><th>new median Mbit/s</th><th>new 95% interval</th><th>n</th><th>change</th><th>p</th><th>note</th></tr>
{{range .Cells}}{{$key := .Key}}{{with .Goodput}}<tr class="{{if .Significant}}sig{{end}}" data-compare-cell="{{$key}}">
<td class="key">{{wbr $key}}</td><td class="n">{{num .Old.Center}}</td><td class="n">{{num .Old.Lo}} – {{num .Old.Hi}}</td><td class="n">{{.Old.N}}</td><td class="n">{{num .New.Center}}</td><td class="n">{{num .New.Lo}} – {{num .New.Hi}}</td><td class="n">{{.New.N}}</td><td class="n change">{{if .Significant}}{{pct .ChangePct}}{{else}}~{{end}}</td><td class="n">{{p .P}}</td><td>{{.Note}}</td></tr>
{{end}}{{end}}</table>
{{if hasCounters .}}<details class="counters"><summary>The --explain counters per MB, compared the same way</summary>
<table class="compare-counters">
<tr><th>cell</th><th>counter per MB</th><th>old median</th><th>old 95% interval</th><th>new median</th><th>new 95% interval</th><th>change</th><th>p</th></tr>
{{range .Cells}}{{$key := .Key}}{{range .Counters}}<tr class="{{if .Significant}}sig{{end}}">
<td class="key">{{wbr $key}}</td><td>{{.Name}}</td><td class="n">{{num .Old.Center}}</td><td class="n">{{num .Old.Lo}} – {{num .Old.Hi}}</td><td class="n">{{num .New.Center}}</td><td class="n">{{num .New.Lo}} – {{num .New.Hi}}</td><td class="n change">{{if .Significant}}{{pct .ChangePct}}{{else}}~{{end}}</td><td class="n">{{p .P}}</td></tr>
{{end}}{{end}}</table>
</details>
{{end}}
{{end}}{{end}}{{with .RatioChanges}}<h3>Ratios</h3>
<pre class="ratios">{{.}}</pre>
{{end}}{{with .Cmp}}{{if .OnlyOld}}<p>Only in the old run:</p><ul>{{range .OnlyOld}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{if .OnlyNew}}<p>Only in the new run:</p><ul>{{range .OnlyNew}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{end}}
{{range .Figures}}<figure class="plot" data-figure="{{.Name}}" data-cells="{{join .Cells " "}}">
<img src="{{svgURI .SVG}}" alt="{{.Title}}">
<figcaption>{{.Title}}</figcaption>
</figure>
{{end}}
</section>
{{end}}
{{if .Flames}}
<section id="flames">
<h2>Flamegraphs</h2>
{{range .Flames}}<figure class="flame" data-figure="{{.Name}}">
<img src="{{svgURI .SVG}}" alt="{{.Title}}">
<figcaption>{{.Title}}</figcaption>
</figure>
{{end}}
</section>
{{end}}
</body>
</html>
`))
