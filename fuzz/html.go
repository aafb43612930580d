package fuzz

import (
	"html/template"
	"io"
)

var htmlPage = template.Must(template.New("fuzz").Parse(`<section class="fuzz">
<h2>Fuzz: {{.Target}}, seed {{.Seed}}{{if .Module}} ({{.Module}}){{end}}</h2>
<p>{{.Inputs}} inputs in {{printf "%.0f" .Seconds}} s ({{.PostHandshake}} after a handshake, {{.PreHandshake}} Initials before one), {{.Connections}} connections, {{.Closed}} closed by the target.</p>
{{if .Answers}}<table><tr><th>the target's close</th><th>count</th></tr>{{range $k, $v := .Answers}}<tr><td>{{$k}}</td><td>{{$v}}</td></tr>{{end}}</table>{{end}}
{{if .Findings}}{{range $i, $f := .Findings}}<div class="fail-reason"><b>finding ({{$f.Oracle}}) after input {{$f.After}}</b>: {{$f.Detail}}<pre>{{range $f.Lines}}{{.}}
{{end}}</pre></div>{{end}}{{else}}<p class="pass">No findings.</p>{{end}}</section>
`))

// WriteHTML writes the report as an HTML section.
func (r *Report) WriteHTML(w io.Writer) error { return htmlPage.Execute(w, r) }
