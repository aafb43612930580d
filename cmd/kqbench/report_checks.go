package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"kquic.dev/conformance"
	"kquic.dev/fuzz"
	"kquic.dev/interop"
)

// checkResults is a results file of interop, conformance or fuzz: its
// text and its HTML section.
type checkResults struct {
	text func(io.Writer) error
	html func(io.Writer) error
}

// loadCheckResults reads path if it is one of those (by its schema); ok is
// false for any other file (a matrix results file).
func loadCheckResults(path string) (c checkResults, ok bool, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return c, false, err
	}
	var head struct {
		Schema string `json:"schema"`
	}
	json.Unmarshal(b, &head)
	switch head.Schema {
	case interop.Schema:
		d, err := interop.LoadDocument(path)
		if err != nil {
			return c, true, err
		}
		return checkResults{
			text: func(w io.Writer) error { interop.WriteMatrix(w, d.Results); return nil },
			html: func(w io.Writer) error { return interop.WriteHTML(w, d) },
		}, true, nil
	case conformance.Schema:
		r, err := conformance.Load(path)
		if err != nil {
			return c, true, err
		}
		return checkResults{text: r.WriteTable, html: r.WriteHTML}, true, nil
	case fuzz.Schema:
		r, err := fuzz.Load(path)
		if err != nil {
			return c, true, err
		}
		return checkResults{text: func(w io.Writer) error { r.WriteSummary(w); return nil }, html: r.WriteHTML}, true, nil
	}
	return c, false, nil
}

// reportChecks prints the correctness results files, and writes their HTML
// page to html when it is not empty.
func reportChecks(out, stderr io.Writer, paths []string, html string) error {
	var page bytes.Buffer
	page.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>kqbench: correctness</title><style>
body{font-family:sans-serif;margin:2em} table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}
.pass,.agree{background:#cfc} .fail,.differs,.silent{background:#fcc} .unsupported,.n\/a{background:#ddd} .error,.known-bug{background:#fc9}
span.pass,span.fail,span.known-bug,span.unsupported{padding:0 3px;margin:1px;display:inline-block} .fail-reason{color:#900}
</style></head><body><h1>kqbench: correctness</h1>
`)
	for i, p := range paths {
		c, ok, err := loadCheckResults(p)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if !ok {
			return fmt.Errorf("report: %s is a matrix results file: give matrix results or interop, conformance and fuzz results, not both", p)
		}
		if i > 0 {
			fmt.Fprintln(out)
		}
		if len(paths) > 1 {
			fmt.Fprintf(out, "== %s\n", p)
		}
		if err := c.text(out); err != nil {
			return err
		}
		if err := c.html(&page); err != nil {
			return fmt.Errorf("report: %s: %w", p, err)
		}
	}
	if html == "" {
		return nil
	}
	page.WriteString("</body></html>\n")
	if err := os.WriteFile(html, page.Bytes(), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintf(stderr, "report: wrote %s\n", html)
	return nil
}
