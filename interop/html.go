package interop

import (
	"html/template"
	"io"
)

var htmlPage = template.Must(template.New("interop").Funcs(template.FuncMap{
	"cell": func(res []Result, server, client string) []Result {
		var out []Result
		for _, r := range res {
			if r.Server == server && r.Client == client {
				out = append(out, r)
			}
		}
		return out
	},
	"abbrev": func(name string) string {
		if c, err := CaseNamed(name); err == nil {
			return c.Abbrev
		}
		return name
	},
}).Parse(`<section class="interop">
<h2>Interop{{if .Doc.Module}} ({{.Doc.Module}}){{end}}</h2>
<p>Rows servers, columns clients; green passed, red failed, orange a known module bug on this build, grey unsupported (hover for the reason).</p>
<table><tr><th>server \ client</th>{{range .Clients}}<th>{{.}}</th>{{end}}</tr>
{{range $s := .Servers}}<tr><th>{{$s}}</th>{{range $c := $.Clients}}<td>{{range cell $.Doc.Results $s $c}}<span class="{{.Status}}" title="{{.Case}}: {{.Status}}{{if .Reason}}: {{.Reason}}{{end}}">{{abbrev .Case}}</span> {{end}}</td>{{end}}</tr>
{{end}}</table>
{{range .Doc.Results}}{{if or (eq .Status "fail") (eq .Status "known-bug")}}<p class="fail-reason"><b>{{.Case}}</b>, client {{.Client}}, server {{.Server}}: {{.Status}}: {{.Reason}}{{if .KnownBug}} (known module bug {{.KnownBug}}){{end}}{{if .Module}} (module {{.Module}}){{end}}{{if .Evidence}} (evidence: {{.Evidence}}){{end}}</p>
{{end}}{{end}}</section>
`))

// WriteHTML writes the results as an HTML section: the matrix with each
// case's letter colored by its status and its reason on hover, then the
// failures.
func WriteHTML(w io.Writer, d *Document) error {
	var servers, clients []string
	seen := map[string]bool{}
	for _, r := range d.Results {
		if !seen["s"+r.Server] {
			seen["s"+r.Server] = true
			servers = append(servers, r.Server)
		}
		if !seen["c"+r.Client] {
			seen["c"+r.Client] = true
			clients = append(clients, r.Client)
		}
	}
	return htmlPage.Execute(w, struct {
		Doc              *Document
		Servers, Clients []string
	}{d, servers, clients})
}
