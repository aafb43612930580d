package fuzz

import (
	"html/template"
	"io"

	"kquic.dev/kmod/kcov"
)

var htmlPage = template.Must(template.New("fuzz").Funcs(template.FuncMap{
	"lines": func(f kcov.FileLines) int { return len(f.Reached) + len(f.Unreached) },
}).Parse(`<section class="fuzz">
<h2>Fuzz: {{.Target}}, seed {{.Seed}}{{if .Module}} ({{.Module}}){{end}}</h2>
<p>{{.Inputs}} inputs in {{printf "%.0f" .Seconds}} s ({{.PostHandshake}} after a handshake, {{.PreHandshake}} Initials before one), {{.Connections}} connections, {{.Closed}} closed by the target.</p>
{{if .Answers}}<table><tr><th>the target's close</th><th>count</th></tr>{{range $k, $v := .Answers}}<tr><td>{{$k}}</td><td>{{$v}}</td></tr>{{end}}</table>{{end}}
{{if .Findings}}{{range $i, $f := .Findings}}<div class="fail-reason"><b>finding ({{$f.Oracle}}) after input {{$f.After}}</b>: {{$f.Detail}}{{if $f.Reproducer}} (reproducer {{$f.Reproducer}}){{end}}<pre>{{range $f.Lines}}{{.}}
{{end}}</pre></div>{{end}}{{else}}<p class="pass">No findings.</p>{{end}}
{{with .Coverage}}<h3>KCOV coverage of module {{.Module}}</h3>
<p>{{.Reached}} of {{.Points}} coverage points, {{.LinesReached}} of {{.Lines}} source lines, {{.FunctionsReached}} of {{.FunctionsInstrumented}} functions
(inlined kernel headers: {{.HeaderLinesReached}} of {{.HeaderLines}} lines); {{.ThreadsTraced}} of {{.Threads}} threads traced, task context only
(the module's softirq receive path is not seen).</p>
<table><tr><th>file</th><th>lines reached</th><th>of</th></tr>{{range .Files}}<tr><td>{{.File}}</td><td>{{len .Reached}}</td><td>{{lines .}}</td></tr>{{end}}</table>
<details><summary>functions</summary><table><tr><th>function</th><th>where</th><th>points reached</th><th>of</th><th>calls</th></tr>{{range .Functions}}<tr{{if eq .Reached 0}} class="silent"{{end}}><td>{{.Name}}</td><td>{{.File}}:{{.Line}}</td><td>{{.Reached}}</td><td>{{.Points}}</td><td>{{.Calls}}</td></tr>{{end}}</table></details>
{{end}}</section>
`))

// WriteHTML writes the report as an HTML section.
func (r *Report) WriteHTML(w io.Writer) error { return htmlPage.Execute(w, r) }
