package bulk

import (
	"fmt"
	"io"
	"text/tabwriter"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
	"kquic.dev/bench/send"
)

// writeSendNote says, after the tables, what a zerocopy cell measured on
// this host means (nothing for a run without one).
func writeSendNote(w io.Writer, d *results.Document) {
	if zeroCopied(d) {
		fmt.Fprintln(w, "zc    "+send.CopiedNote+" (kqbench matrix --explain: the counts)")
	}
}

// zeroCopied reports whether a measured zerocopy cell had completions
// marked copied.
func zeroCopied(d *results.Document) bool {
	for _, c := range d.Cells {
		if c.Status == results.StatusOK && (c.Send == send.ZeroCopy || c.Send == send.UringZC) && mean(c, send.CounterZCCopied) > 0 {
			return true
		}
	}
	return false
}

// WriteSendCounters prints, for each measured cell of another send method
// than write, what its client's senders did over the window (means over
// the samples): the calls that sent, the bytes per call, and for
// zerocopy the sends the kernel took with MSG_ZEROCOPY, the completions
// the error queue reported and how many of them it marked copied.
// Nothing when there are none.
func WriteSendCounters(w io.Writer, d *results.Document) error {
	var rows []results.CellResult
	for _, c := range d.Cells {
		if c.Status == results.StatusOK && c.Send != "" && hasCounter(c, send.CounterCalls) {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Send methods: what the client's senders did over the window, means over the samples (--send; counted with --explain)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "cell\tMbit/s\tcalls\tKiB/call\tzc sends\tcompleted\tcopied\tcopied %\t")
	copied := false
	for _, c := range rows {
		calls, bytes := mean(c, send.CounterCalls), mean(c, send.CounterBytes)
		per := "-"
		if calls > 0 {
			per = fmt.Sprintf("%.1f", bytes/calls/1024)
		}
		zs, zd, zc, pct := "-", "-", "-", "-"
		if hasCounter(c, send.CounterZCSent) {
			zs, zd, zc = fmt.Sprintf("%.0f", mean(c, send.CounterZCSent)), fmt.Sprintf("%.0f", mean(c, send.CounterZCDone)), fmt.Sprintf("%.0f", mean(c, send.CounterZCCopied))
			if done := mean(c, send.CounterZCDone); done > 0 {
				pct = fmt.Sprintf("%.0f%%", 100*mean(c, send.CounterZCCopied)/done)
				copied = copied || mean(c, send.CounterZCCopied) > 0
			}
		}
		label := fmt.Sprintf("%s %s mtu %d gso %s", c.ColumnName(), render.SizeName(c.Size), c.MTU, matrix.OnOff(c.GSO))
		if n := ConnsOf(c.Cell); n > 1 {
			label += fmt.Sprintf(" %d conns", n)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%s\t%s\t%s\t%s\t%s\t\n", label, c.MedianBps/1e6, calls, per, zs, zd, zc, pct)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if copied {
		fmt.Fprintln(w, send.CopiedNote)
	}
	return nil
}

func hasCounter(c results.CellResult, k string) bool {
	for _, s := range c.Samples {
		if _, ok := s.Counters[k]; ok {
			return true
		}
	}
	return false
}

// mean is the mean of counter k over the samples that have it.
func mean(c results.CellResult, k string) float64 {
	var sum float64
	n := 0
	for _, s := range c.Samples {
		if v, ok := s.Counters[k]; ok {
			sum += v
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}
