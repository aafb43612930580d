package conformance

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"kquic.dev/internal/jsonfile"
)

// WriteTable writes the report as a table: one line per rule and role, the
// RFC's answer beside the target's, and a summary.
//
// The table reaches w in a few large writes: a tabwriter writes each cell
// and each run of padding on its own (about 1700 writes for the full
// table), and in the qemu guest each write to standard output is a buffer
// of the virtio console's queue (128 of them). A run whose queue filled with
// such 2-byte buffers sat in the kernel's wait_port_writable for good (the
// host had read everything, qemu idled: issue 38), the table cut short.
func (r *Report) WriteTable(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := r.writeTable(bw); err != nil {
		return err
	}
	return bw.Flush()
}

func (r *Report) writeTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "rule\trole\tRFC 9000\tlevel\tthe RFC's answer\t%s's answer\tagree?\n", r.Target)
	for _, x := range r.Results {
		ans := x.Answer.String()
		if x.Verdict == NA {
			ans = "(not applicable)"
		}
		fmt.Fprintf(tw, "%s\t%s\t§%s\t%s\t%s\t%s\t%s\n", x.Rule, x.Role, x.Section, x.Level, strings.Join(x.Want, " or "), ans, mark(x.Verdict))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s: %d results in %.1fs: %d agree, %d close with another code, %d silent, %d not applicable, %d not run (error)\n",
		r.Target, len(r.Results), r.Seconds, r.Count(Agree), r.Count(Differs), r.Count(Silent), r.Count(NA), r.Count(Failed))
	return err
}

func mark(verdict string) string {
	switch verdict {
	case Agree:
		return "yes"
	case Differs, Silent:
		return "NO (" + verdict + ")"
	}
	return verdict
}

// Save writes the report as indented JSON.
func (r *Report) Save(path string) error {
	if err := jsonfile.Save(path, r); err != nil {
		return fmt.Errorf("conformance: %w", err)
	}
	return nil
}

// Load reads a report Save wrote.
func Load(path string) (*Report, error) {
	var r Report
	if err := jsonfile.Load(path, &r, Schema); err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	return &r, nil
}
