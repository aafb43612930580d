package render

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
)

// What the tables of every mode share.

// SizeName is a size as the tables write it: "64 KiB", "1 MiB", "100 B".
func SizeName(z int) string {
	switch {
	case z >= 1<<20 && z%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", z>>20)
	case z >= 1<<10 && z%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", z>>10)
	}
	return fmt.Sprintf("%d B", z)
}

// FigureText is a cell's entry in a table: the figure of a measured cell,
// rounded, with "~" when its spread is wide; "…" for a cell not in the
// document, "n/a" or "-" for a cell that cannot run, and FAIL for any
// other (and for a measured cell without the figure).
func FigureText(d *results.Document, c matrix.Cell, figure func(*results.CellResult) (float64, bool)) string {
	r, ok := d.Lookup(c)
	if !ok {
		return "…"
	}
	switch r.Status {
	case results.StatusNA, results.StatusUnavailable:
		return StatusText(r.Status)
	case results.StatusOK:
	default:
		return "FAIL"
	}
	v, ok := figure(r)
	if !ok {
		return "FAIL"
	}
	s := strconv.FormatFloat(v, 'f', 0, 64)
	if r.WideSpread {
		s += "~"
	}
	return s
}

// Share is n of total as a percentage, "-" for none.
func Share(n, total int64) string {
	if n == 0 || total == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", float64(n)*100/float64(total))
}

// StatusText is the word a table shows for a cell's status: "-"
// unavailable, "FAIL", "n/a", or "…" for a cell not measured yet.
func StatusText(status results.Status) string {
	switch status {
	case results.StatusUnavailable:
		return "-"
	case results.StatusFailed:
		return "FAIL"
	case results.StatusNA:
		return "n/a"
	}
	return "…"
}

// RowLabel names a table's row of an MTU and GSO setting as the goodput
// tables do: "MTU 1500", and "  no GSO" under it.
func RowLabel(s matrix.Spec, mtu int, gso bool) string {
	switch {
	case gso:
		return fmt.Sprintf("MTU %d", mtu)
	case slices.Contains(s.GSO, true):
		return "  no GSO"
	}
	return fmt.Sprintf("MTU %d no GSO", mtu)
}

// IOSyscall reports whether a syscall counter ("client.syscall.sendmsg")
// counts a system call that moves a transport's data (sendmsg, recvmsg,
// read, write, sendfile, ...) rather than one of its runtime's (futex,
// epoll_pwait, nanosleep).
func IOSyscall(counter string) bool {
	i := strings.LastIndex(counter, ".syscall.")
	return i >= 0 && ioSyscalls[counter[i+len(".syscall."):]]
}

// WriteRunNotes says under the tables what the run's samples lacked: the
// steal that set samples aside, and the CPU figures that could not be
// read.
func WriteRunNotes(w io.Writer, d *results.Document) {
	writeStealNote(w, d)
	writeCPUNote(w, d)
}
