package fuzz

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"kquic.dev/internal/jsonfile"
)

// Save writes the report as indented JSON.
func (r *Report) Save(path string) error {
	if err := jsonfile.Save(path, r); err != nil {
		return fmt.Errorf("fuzz: %w", err)
	}
	return nil
}

// Load reads a report Save wrote.
func Load(path string) (*Report, error) {
	var r Report
	if err := jsonfile.Load(path, &r, Schema); err != nil {
		return nil, fmt.Errorf("fuzz: %w", err)
	}
	return &r, nil
}

// WriteSummary writes what the run did and found.
func (r *Report) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "fuzz %s, seed %d: %d inputs in %.0fs (%d after a handshake, %d Initials before one), %d connections, %d closed by the target\n",
		r.Target, r.Seed, r.Inputs, r.Seconds, r.PostHandshake, r.PreHandshake, r.Connections, r.Closed)
	if len(r.Answers) > 0 {
		var names []string
		for k := range r.Answers {
			names = append(names, k)
		}
		sort.Slice(names, func(i, j int) bool { return r.Answers[names[i]] > r.Answers[names[j]] })
		var parts []string
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s %d", n, r.Answers[n]))
		}
		fmt.Fprintf(w, "the target's closes: %s\n", strings.Join(parts, ", "))
	}
	switch {
	case r.Coverage != nil:
		r.Coverage.WriteSummary(w)
	case r.KCOV != nil:
		fmt.Fprintf(w, "KCOV: %d addresses in module %s, not mapped to lines (give the module file: --module with --vm, --kcov-module without)\n", len(r.KCOV.PCs), r.KCOV.Layout.Module)
	}
	if len(r.Findings) == 0 {
		fmt.Fprintln(w, "findings: none")
		return
	}
	for i, f := range r.Findings {
		fmt.Fprintf(w, "finding %d (%s) after input %d: %s\n", i+1, f.Oracle, f.After, f.Detail)
		for _, l := range f.Lines[:min(len(f.Lines), 12)] {
			fmt.Fprintf(w, "    %s\n", l)
		}
		if len(f.Window) > 0 {
			last := f.Window[len(f.Window)-1]
			fmt.Fprintf(w, "    last input %d: %s\n", last.Seq, last.What)
		}
		if f.Reproducer != "" {
			fmt.Fprintf(w, "    reproducer: %s\n", f.Reproducer)
		}
	}
}
