// Package report writes one self-contained HTML page of kqbench results:
// for each results file its environment, its tables, every cell with its
// samples' summary, and its figures (package bench/plot); for two or more
// files the comparison of each with the first (results.Compare); and extra
// figures such as flamegraphs when given. The page loads nothing from
// anywhere: its style is inline and its figures are data: URIs.
package report

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"kquic.dev/bench/plot"
	"kquic.dev/bench/ratio"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

// Run is one results file.
type Run struct {
	// Name is how the page names the run (its file name).
	Name string
	Doc  *results.Document
}

// Figure is an SVG image the page shows as it is, with a title: the hook
// for flamegraphs (per cell, or the difference of an A/B pair).
type Figure struct {
	Title string
	SVG   []byte
}

// Options configures HTML.
type Options struct {
	// Title heads the page (default "kqbench report").
	Title string
	// Compare configures the comparisons (Force compares runs whose
	// environments differ, listing how).
	Compare results.CompareOptions
	// Flames are shown in a section of their own when present.
	Flames []Figure
}

// Page is the content of the page, built from the runs before it is
// written.
type Page struct {
	Title       string
	Runs        []RunView
	Comparisons []ComparisonView
	Flames      []FigureView
}

// RunView is one run on the page.
type RunView struct {
	ID, Name string
	Doc      *results.Document
	// Caveats are the warnings the text tables print (a VM or emulated
	// machine, a two-host peer that is this machine).
	Caveats []string
	// Problems are what is wrong with the file's cells (hand edits, a
	// truncated run): the page shows them, and what could be drawn.
	Problems []string
	Env      [][2]string
	Tables   string // the text tables of `kqbench report`
	Explain  string // and of `kqbench report --explain`, when counted
	// GoodputTables are Tables as HTML tables, Notes what their marks
	// mean, and ExplainTable the counters of Explain, for runs of the
	// default mode (the other modes show their text tables).
	GoodputTables []GoodputTable
	Notes         []string
	ExplainTable  *ExplainTable
	// Ratios are the module README's ratios of a default-mode run
	// (render.RatioTables).
	Ratios  []ratio.Table
	Cells   []results.CellResult
	Figures []FigureView
}

// ComparisonView is one run against the first.
type ComparisonView struct {
	ID       string
	Old, New string
	// Err is why Compare refused, or found nothing to compare.
	Err string
	Cmp *results.Comparison
	// RatioChanges says which of the README's ratios moved
	// (render.WriteRatioChanges).
	RatioChanges string
	// Figures are the change per cell.
	Figures []FigureView
}

// FigureView is a figure ready for the page.
type FigureView struct {
	Name  string
	Title string
	// SVG is the image; Cells the keys of the cells it draws.
	SVG   []byte
	Cells []string
}

// Build lays out the page: every run, and with two or more runs the
// comparison of each later run with the first. Runs that cannot be
// compared are shown with the reason; what can be is compared.
func Build(runs []Run, o Options) (*Page, error) {
	if len(runs) == 0 {
		return nil, errors.New("report: no results to show")
	}
	p := &Page{Title: o.Title}
	if p.Title == "" {
		p.Title = "kqbench report"
	}
	for i, r := range runs {
		rv, err := buildRun(i, r)
		if err != nil {
			return nil, err
		}
		p.Runs = append(p.Runs, rv)
	}
	for i := 1; i < len(runs); i++ {
		cv := ComparisonView{ID: fmt.Sprintf("compare-%d", i), Old: runs[0].Name, New: runs[i].Name}
		c, err := results.Compare(runs[0].Doc, runs[i].Doc, o.Compare)
		if err != nil {
			cv.Err = err.Error()
		}
		// Even when refused, c holds the differences and the cells of
		// one run only.
		cv.Cmp = c
		var rb bytes.Buffer
		if err := render.WriteRatioChanges(&rb, runs[0].Doc, runs[i].Doc, o.Compare.Alpha); err != nil {
			return nil, err
		}
		cv.RatioChanges = strings.TrimSpace(rb.String())
		if c != nil && len(c.Cells) > 0 {
			figs, err := drawFigures(plot.Change(c, runs[0].Doc.Spec))
			if err != nil {
				return nil, err
			}
			cv.Figures = figs
		}
		p.Comparisons = append(p.Comparisons, cv)
	}
	for i, f := range o.Flames {
		p.Flames = append(p.Flames, FigureView{Name: fmt.Sprintf("flame-%d", i), Title: f.Title, SVG: f.SVG})
	}
	return p, nil
}

func buildRun(i int, r Run) (RunView, error) {
	d := r.Doc
	rv := RunView{ID: fmt.Sprintf("run-%d", i), Name: r.Name, Doc: d, Cells: d.Cells, Env: environment(d), Problems: Check(d)}
	if c := d.Env.Machine.Caveat(); c != "" {
		rv.Caveats = append(rv.Caveats, c)
	}
	if d.Env.PeerIsThisMachine {
		rv.Caveats = append(rv.Caveats, render.SamePeerWarning)
	}
	if line := d.Env.TopologyLine(); line != "" {
		rv.Caveats = append(rv.Caveats, line)
	}
	var b bytes.Buffer
	if err := render.WriteTables(&b, d); err != nil {
		return rv, err
	}
	rv.Tables = b.String()
	rv.GoodputTables = goodputTables(d)
	if rv.GoodputTables != nil {
		rv.Notes = tableNotes(d)
	}
	if hasCounters(d) {
		b.Reset()
		if err := render.WriteExplain(&b, d); err != nil {
			return rv, err
		}
		rv.Explain = b.String()
		rv.ExplainTable = explainTable(d)
	}
	rv.Ratios = render.RatioTables(d)
	figs, err := drawFigures(plot.All(d))
	if err != nil {
		return rv, err
	}
	rv.Figures = figs
	return rv, nil
}

func hasCounters(d *results.Document) bool {
	for _, c := range d.Cells {
		for _, s := range c.Samples {
			if len(s.Counters) > 0 {
				return true
			}
		}
	}
	return false
}

// drawFigures renders the figures as SVG for the page.
func drawFigures(figs []plot.Figure) ([]FigureView, error) {
	var out []FigureView
	for _, f := range figs {
		var b bytes.Buffer
		if err := f.Render(&b, "svg"); err != nil {
			return nil, err
		}
		out = append(out, FigureView{Name: f.Name, Title: f.Title, SVG: b.Bytes(), Cells: f.Cells()})
	}
	return out, nil
}

// Check lists what is wrong with a document's cells that a run does not
// write: a key that does not match the cell, a measured cell without
// samples, samples with no bytes or time, a status kqbench does not know,
// and a run that did not finish. The page shows them; the figures leave
// such cells out where they cannot be drawn.
func Check(d *results.Document) []string {
	var out []string
	if !d.Complete {
		out = append(out, "the run did not finish (complete: false): cells may be missing; `kqbench matrix --resume` continues it")
	}
	seen := map[string]bool{}
	for _, c := range d.Cells {
		if k := c.Cell.Key(); c.Key != k {
			out = append(out, fmt.Sprintf("cell %q: its fields make the key %q (edited by hand?)", c.Key, k))
		}
		if seen[c.Key] {
			out = append(out, fmt.Sprintf("cell %q appears more than once", c.Key))
		}
		seen[c.Key] = true
		switch c.Status {
		case results.StatusOK:
			if len(c.Samples) == 0 {
				out = append(out, fmt.Sprintf("cell %q: status ok but no samples", c.Key))
			}
			for i, s := range c.Samples {
				if s.Bytes <= 0 || s.Seconds <= 0 || s.Bps <= 0 {
					out = append(out, fmt.Sprintf("cell %q: sample %d has bytes %d in %g s (%g bit/s)", c.Key, i+1, s.Bytes, s.Seconds, s.Bps))
				}
			}
			if c.Size <= 0 {
				out = append(out, fmt.Sprintf("cell %q: message size %d", c.Key, c.Size))
			}
		case results.StatusNA, results.StatusUnavailable, results.StatusFailed:
		default:
			out = append(out, fmt.Sprintf("cell %q: unknown status %q", c.Key, c.Status))
		}
	}
	return out
}

// environment is the run's environment as label and value rows.
func environment(d *results.Document) [][2]string {
	e, m := d.Env, d.Env.Machine
	var rows [][2]string
	add := func(k, v string) {
		if strings.TrimSpace(v) != "" {
			rows = append(rows, [2]string{k, v})
		}
	}
	add("command", strings.Join(d.Command, " "))
	add("started", d.Started.Format("2006-01-02 15:04:05 MST"))
	add("updated", d.Updated.Format("2006-01-02 15:04:05 MST"))
	add("complete", fmt.Sprint(d.Complete))
	add("spec", fmt.Sprintf("transports %s; sizes %v; MTUs %v; GSO %v; encryption %v; directions %v; %d stream(s); %v a sample after %v warm-up; %d repeats",
		strings.Join(d.Spec.Transports, ","), d.Spec.Sizes, d.Spec.MTUs, d.Spec.GSO, d.Spec.Crypto, d.Spec.Directions, d.Spec.Streams, d.Spec.Time, d.Spec.Warmup, d.Spec.Repeat))
	add("hostname", e.Hostname)
	add("boot ID", e.BootID)
	add("kernel", e.Kernel+" "+e.KernelVersion)
	add("QUIC module", e.QUICModule)
	add("CPU", fmt.Sprintf("%s, %d CPUs", e.CPUModel, e.CPUs))
	add("machine", m.Kind)
	add("CPU flags", strings.Join(m.CPUFlags, " "))
	add("microcode", m.Microcode)
	add("governor", m.Governor)
	add("turbo", m.Turbo)
	add("SMT", m.SMT)
	if m.NUMANodes > 0 {
		add("NUMA nodes", fmt.Sprint(m.NUMANodes))
	}
	add("kernel command line", m.Cmdline)
	add("kernel config SHA-256", m.KernelConfig)
	add("mitigations", strings.Join(m.Mitigations, "; "))
	var ks []string
	for k := range m.Sysctls {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		add(k, m.Sysctls[k])
	}
	add("quic module build ID", m.QUICBuildID)
	add("quic module SHA-256", m.QUICModuleSHA256)
	add("quic module code", m.QUICModuleCode)
	add("Go", e.GoVersion)
	add("quic-go", e.QuicGoVersion)
	add("kqbench", e.Kqbench)
	add("topology", e.Topology)
	add("NIC driver", e.NICDriver)
	nic := func(who string, n *results.NIC) {
		if n == nil {
			return
		}
		add(who+"NIC", fmt.Sprintf("%s: driver %s %s, firmware %s, bus %s", n.Device, n.Driver, n.DriverVersion, n.Firmware, n.BusInfo))
		add(who+"NIC rings", n.Rings)
		add(who+"NIC channels", n.Channels)
		add(who+"NIC coalescing", n.Coalescing)
		var irqs []string
		for _, q := range n.IRQs {
			irqs = append(irqs, fmt.Sprintf("%d %s -> CPU %s", q.IRQ, q.Name, q.CPUs))
		}
		add(who+"NIC interrupts", strings.Join(irqs, "; "))
	}
	nic("", e.NIC)
	add("CPU pinning", d.Spec.Affinity.String())
	var ts []string
	for t := range e.Transports {
		ts = append(ts, t)
	}
	sort.Strings(ts)
	for _, t := range ts {
		add("transport "+t, e.Transports[t])
	}
	if e.Peer != nil {
		add("peer", fmt.Sprintf("%s: kernel %s, %s, %d CPUs, %s", e.Peer.Hostname, e.Peer.Kernel, e.Peer.CPUModel, e.Peer.CPUs, e.Peer.Machine.Kind))
		nic("peer ", e.Peer.NIC)
	}
	return rows
}

// Load reads results files for a report, named by their paths. Every file
// that cannot be read (missing, truncated, not JSON, another schema
// version) is named in the error, not only the first.
func Load(paths []string) ([]Run, error) {
	var runs []Run
	var errs []error
	for _, p := range paths {
		d, err := results.Load(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		runs = append(runs, Run{Name: p, Doc: d})
	}
	return runs, errors.Join(errs...)
}
