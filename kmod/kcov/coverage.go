package kcov

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Layout is where a running kernel placed a module.
type Layout struct {
	Module string `json:"module"`
	// BuildID is the loaded module's GNU build ID (hex): [Symbolize]
	// checks that the file it reads is that module.
	BuildID string `json:"build_id,omitempty"`
	// Sections are the addresses of the module's sections.
	Sections map[string]uint64 `json:"sections"`
	// TextLow and TextHigh are the lowest and highest addresses of the
	// module's functions in /proc/kallsyms.
	TextLow  uint64 `json:"text_low"`
	TextHigh uint64 `json:"text_high"`
	// KASLROffset is what KCOV takes away from every address it records.
	KASLROffset uint64 `json:"kaslr_offset"`
}

// Trace is what a run collected: the module's addresses KCOV recorded, and
// how much of the process was traced.
type Trace struct {
	Layout Layout `json:"layout"`
	// PCs are the distinct addresses in the module, as KCOV recorded
	// them (the return addresses of the calls to
	// __sanitizer_cov_trace_pc, less the KASLR offset).
	PCs []uint64 `json:"pcs"`
	// Counts are how many times each of PCs was recorded.
	Counts []uint64 `json:"counts,omitempty"`
	// Outside counts the addresses outside the module (the kernel's own,
	// where it is instrumented).
	Outside int `json:"outside,omitempty"`
	// ThreadsTraced of the process's Threads at the end of the run.
	ThreadsTraced int `json:"threads_traced"`
	Threads       int `json:"threads"`
	// Overflows counts collections that found a buffer full.
	Overflows int `json:"overflows,omitempty"`
	// Missed counts the calls made through [Tracer.Run] on a thread it
	// could not trace.
	Missed int `json:"missed,omitempty"`
}

// Coverage is a trace mapped to the module's functions and lines.
type Coverage struct {
	Module string `json:"module"`
	// File is the module file the trace was mapped with.
	File string `json:"file"`
	// Points are the module's coverage points (its calls to
	// __sanitizer_cov_trace_pc), Reached those the run recorded.
	Points  int `json:"points"`
	Reached int `json:"reached"`
	// Lines and LinesReached count the module's own source lines (its .c
	// files and the headers beside them) with a coverage point; lines of
	// kernel headers inlined into it are counted apart.
	Lines                 int `json:"lines"`
	LinesReached          int `json:"lines_reached"`
	HeaderLines           int `json:"header_lines"`
	HeaderLinesReached    int `json:"header_lines_reached"`
	FunctionsReached      int `json:"functions_reached"`
	FunctionsInstrumented int `json:"functions_instrumented"`
	// Functions are those with coverage points, by name.
	Functions []Function `json:"functions"`
	// Files are the module's own source files with coverage points.
	Files []FileLines `json:"files"`
	// Unmapped counts recorded addresses that are no coverage point of
	// the file (a wrong file or layout shows as many).
	Unmapped int `json:"unmapped,omitempty"`
	// ThreadsTraced, Threads, Overflows and Missed come from the trace.
	ThreadsTraced int `json:"threads_traced"`
	Threads       int `json:"threads"`
	Overflows     int `json:"overflows,omitempty"`
	Missed        int `json:"missed,omitempty"`
}

// Function is one function's coverage.
type Function struct {
	Name string `json:"name"`
	// File and Line are where its first coverage point is.
	File    string `json:"file"`
	Line    int    `json:"line"`
	Points  int    `json:"points"`
	Reached int    `json:"reached"`
	// Calls is how many times its entry block ran: its calls from the
	// traced threads.
	Calls uint64 `json:"calls"`
}

// FileLines are one source file's lines with coverage points, reached or
// not.
type FileLines struct {
	File      string `json:"file"`
	Reached   []int  `json:"reached"`
	Unreached []int  `json:"unreached"`
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// WriteSummary writes the totals and the functions reached.
func (c *Coverage) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "KCOV, module %s (%s): %d of %d coverage points (%.1f%%), %d of %d source lines (%.1f%%), %d of %d functions; inlined kernel headers: %d of %d lines\n",
		c.Module, c.File, c.Reached, c.Points, pct(c.Reached, c.Points), c.LinesReached, c.Lines, pct(c.LinesReached, c.Lines),
		c.FunctionsReached, c.FunctionsInstrumented, c.HeaderLinesReached, c.HeaderLines)
	fmt.Fprintf(w, "  traced %d of the fuzzer's %d threads, in task context only (softirq and kworkers are not seen)", c.ThreadsTraced, c.Threads)
	if c.Overflows > 0 {
		fmt.Fprintf(w, "; %d buffer overflows (addresses lost)", c.Overflows)
	}
	if c.Unmapped > 0 {
		fmt.Fprintf(w, "; %d addresses that are no coverage point of the file", c.Unmapped)
	}
	if c.Missed > 0 {
		fmt.Fprintf(w, "; %d socket calls made on a thread that could not be traced", c.Missed)
	}
	fmt.Fprintln(w)
	for _, f := range c.Files {
		fmt.Fprintf(w, "  %-28s %4d of %4d lines\n", shortFile(f.File), len(f.Reached), len(f.Reached)+len(f.Unreached))
	}
}

// WriteFunctions writes every instrumented function with its points
// reached, the most reached first.
func (c *Coverage) WriteFunctions(w io.Writer) {
	fs := append([]Function(nil), c.Functions...)
	sort.SliceStable(fs, func(i, j int) bool { return pct(fs[i].Reached, fs[i].Points) > pct(fs[j].Reached, fs[j].Points) })
	for _, f := range fs {
		fmt.Fprintf(w, "  %-40s %-22s %4d of %4d points, %d calls\n", f.Name, fmt.Sprintf("%s:%d", shortFile(f.File), f.Line), f.Reached, f.Points, f.Calls)
	}
}

// Function returns the named function's coverage, or nil.
func (c *Coverage) Function(name string) *Function {
	for i := range c.Functions {
		if c.Functions[i].Name == name {
			return &c.Functions[i]
		}
	}
	return nil
}

// shortFile is a source path from its module directory on ("net/quic/packet.c").
func shortFile(p string) string {
	parts := strings.Split(p, "/")
	if len(parts) > 3 {
		return strings.Join(parts[len(parts)-3:], "/")
	}
	return p
}
