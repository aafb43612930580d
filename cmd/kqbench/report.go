package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"kquic.dev/bench/plot"
	"kquic.dev/bench/render"
	"kquic.dev/bench/report"
	"kquic.dev/bench/results"
)

func newReportCmd() *cobra.Command {
	var (
		explain bool
		html    string
		csvOut  string
		figures []string
		o       results.CompareOptions
	)
	cmd := &cobra.Command{
		Use:   "report RESULTS.json...",
		Short: "Print the tables of matrix results files (and, with --explain, their counters); --html writes a page with plots; also interop, conformance and fuzz results",
		Long: `Print the tables of one or more kqbench matrix results files, and with
--explain the counters per MB.

--html FILE also writes one self-contained HTML page (no network access
needed to view it): for each file its environment, tables, every cell and
the plots (goodput and CPU per byte against message size, the --explain
counters), and with two or more files the comparison of each with the first
(as kqbench compare: medians with 95% intervals, change, p value, and a plot
of the change per cell). Files that differ in what changes the figures are
not compared unless --force. --figure adds SVG images (flamegraphs) to the
page.

--csv FILE writes the CSV summary of one results file, as kqbench matrix
--csv does.

Results files of kqbench interop, conformance and fuzz print as those
commands print them, and --html writes a page of them (the interop matrix
colored by status, each failure's reason on hover).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, ok, _ := loadCheckResults(args[0]); ok {
				return reportChecks(cmd.OutOrStdout(), cmd.ErrOrStderr(), args, html)
			}
			if csvOut != "" && len(args) > 1 {
				return fmt.Errorf("report: --csv writes the summary of one results file, not %d", len(args))
			}
			runs, err := report.Load(args)
			if err != nil {
				return fmt.Errorf("report: %w", err)
			}
			if csvOut != "" {
				if err := writeCSVFile(csvOut, runs[0].Doc); err != nil {
					return fmt.Errorf("report: --csv: %w", err)
				}
			}
			out := cmd.OutOrStdout()
			for i, r := range runs {
				if len(runs) > 1 {
					if i > 0 {
						fmt.Fprintln(out)
					}
					fmt.Fprintf(out, "== %s\n", r.Name)
				}
				if err := render.WriteTables(out, r.Doc); err != nil {
					return err
				}
				if err := render.WriteRatios(out, r.Doc); err != nil {
					return err
				}
				if explain {
					fmt.Fprintln(out)
					if err := render.WriteExplain(out, r.Doc); err != nil {
						return err
					}
				}
			}
			if html == "" {
				return nil
			}
			return writeReportHTML(cmd.ErrOrStderr(), html, runs, figures, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&explain, "explain", false, "also print the per-MB counters")
	f.StringVar(&html, "html", "", "also write a self-contained HTML page with the tables, plots, environments and comparisons to this file")
	f.StringVar(&csvOut, "csv", "", "also write the CSV summary of the results file (as kqbench matrix --csv) to this file")
	f.StringArrayVar(&figures, "figure", nil, "an SVG image (a flamegraph) to add to the HTML page; repeatable")
	f.BoolVar(&o.Force, "force", false, "compare runs whose environments differ (the differences are listed)")
	f.Float64Var(&o.Alpha, "alpha", 0.05, "significance level of the comparisons")
	return cmd
}

// writeReportHTML writes the HTML page of runs to path, with the cells'
// flamegraphs and the --figure images, and says on stderr what it could not
// compare.
func writeReportHTML(stderr io.Writer, path string, runs []report.Run, figures []string, o results.CompareOptions) error {
	opts := report.Options{Compare: o}
	// The cells' own flamegraphs (kqbench matrix --profile).
	cellFlames, err := report.CellFlames(runs)
	if err != nil {
		fmt.Fprintf(stderr, "report: %v\n", err)
	}
	opts.Flames = append(opts.Flames, cellFlames...)
	for _, f := range figures {
		svg, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("report: --figure: %w", err)
		}
		if !bytes.Contains(svg, []byte("<svg")) {
			return fmt.Errorf("report: --figure %s is not an SVG image", f)
		}
		opts.Flames = append(opts.Flames, report.Figure{Title: filepath.Base(f), SVG: svg})
	}
	p, err := report.Build(runs, opts)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for _, c := range p.Comparisons {
		if c.Err != "" {
			fmt.Fprintf(stderr, "report: %s against %s: %s\n", c.New, c.Old, c.Err)
		}
	}
	fmt.Fprintf(stderr, "report: wrote %s\n", path)
	return nil
}

// writeCSVFile writes the CSV summary of a results document to path.
func writeCSVFile(path string, doc *results.Document) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := render.WriteCSV(f, doc); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func newPlotCmd() *cobra.Command {
	var (
		dir     string
		formats []string
		o       results.CompareOptions
	)
	cmd := &cobra.Command{
		Use:   "plot RESULTS.json...",
		Short: "Draw the plots of matrix results files (SVG, PNG); with two or more, the change of each against the first",
		Long: `Draw, for each kqbench matrix results file, goodput and CPU time per byte
against message size (one panel per MTU, GSO and encryption setting, one
line per transport, bars from the lowest to the highest repeat) and the
--explain counters per MB; with two or more files also the change of goodput
per cell of each against the first, with the bounds its 95% intervals allow.
The files go to --out, named after the figure (and, with several files,
after the results file).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			runs, err := report.Load(args)
			if err != nil {
				return fmt.Errorf("plot: %w", err)
			}
			paths, notes, err := report.WritePlots(dir, runs, formats, o)
			for _, p := range paths {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			for _, n := range notes {
				fmt.Fprintf(cmd.ErrOrStderr(), "plot: %s\n", n)
			}
			if err != nil {
				return err
			}
			if len(paths) == 0 {
				return fmt.Errorf("plot: nothing to draw: no cell of %s was measured", strings.Join(args, ", "))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "out", "plots", "directory for the images")
	f.StringSliceVar(&formats, "format", plot.Formats, "image formats: svg, png")
	f.BoolVar(&o.Force, "force", false, "compare runs whose environments differ")
	f.Float64Var(&o.Alpha, "alpha", 0.05, "significance level of the comparisons")
	return cmd
}
