package conformance

import (
	"html/template"
	"io"
	"strings"
)

var htmlPage = template.Must(template.New("conformance").Funcs(template.FuncMap{"join": strings.Join}).Parse(`<section class="conformance">
<h2>Conformance: {{.Target}}{{if .Module}} ({{.Module}}){{end}}</h2>
<p>{{len .Results}} results: {{.Count "agree"}} agree with RFC 9000, {{.Count "differs"}} close with another code, {{.Count "silent"}} silent, {{.Count "n/a"}} not applicable, {{.Count "error"}} not run.</p>
<table><tr><th>rule</th><th>role</th><th>RFC 9000</th><th>level</th><th>the RFC's answer</th><th>the answer</th></tr>
{{range .Results}}<tr class="{{.Verdict}}"><td title="{{.Text}}">{{.Rule}}</td><td>{{.Role}}</td><td>§{{.Section}}</td><td>{{.Level}}</td><td>{{join .Want " or "}}</td><td>{{.Answer}}</td></tr>
{{end}}</table></section>
`))

// WriteHTML writes the report as an HTML section: the table, each row
// classed by its verdict.
func (r *Report) WriteHTML(w io.Writer) error { return htmlPage.Execute(w, r) }
