package render

import (
	"fmt"
	"slices"
	"strings"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/ratio"
	"kquic.dev/bench/results"
)

// The kquic columns as the tables head them. Where a run measured the
// kernel's own figure for kquic (a driver of the kernel's tools,
// matrix.DriverSpec.Kernel: the native driver), that column is "kquic" and
// stands first, and the Go bindings' is "kquic(Go)": the first figure a
// kernel developer reads is the kernel's. Without one, "kquic" is the Go
// bindings', and a note under the tables says so.
const goKquic = "kquic(Go)"

// kernelKquic is the column of the kernel's own kquic figure ("kquic(C)"),
// "" without a kernel driver.
func kernelKquic() string {
	d := matrix.KernelDriver()
	if d == "" {
		return ""
	}
	return matrix.Cell{Transport: "kquic", Driver: d}.ColumnName()
}

// hasNativeKquic reports whether the document measured kquic's kernel
// figure.
func hasNativeKquic(d *results.Document) bool {
	k := matrix.KernelDriver()
	return k != "" && slices.ContainsFunc(d.Cells, func(c results.CellResult) bool {
		return c.Transport == "kquic" && c.Driver == k && c.Status == results.StatusOK
	})
}

// ColumnLabel is how the tables head column col ("kquic", "kquic(C)",
// "tcp(C)", ...) of document d: where d measured kquic natively, its
// native column reads "kquic" and its Go one "kquic(Go)".
func ColumnLabel(d *results.Document, col string) string {
	if !hasNativeKquic(d) {
		return col
	}
	switch col {
	case "kquic":
		return goKquic
	case kernelKquic():
		return "kquic"
	}
	return col
}

// KernelFirst orders columns as the tables show them: where d measured
// kquic natively, its native column before the Go one.
func KernelFirst(d *results.Document, cols []string) []string {
	i, j := slices.Index(cols, "kquic"), slices.Index(cols, kernelKquic())
	if i < 0 || j < 0 || !hasNativeKquic(d) {
		return cols
	}
	out := slices.Clone(cols)
	out[i], out[j] = out[j], out[i]
	return out
}

// labels are the columns' labels, for a table's header.
func labels(d *results.Document, cols []string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = ColumnLabel(d, c)
	}
	return out
}

// KquicNote says what the kquic column carries: without a native kquic
// cell, that it is the Go bindings' figure and how to get the kernel's;
// with one, the Go bindings' figure over the kernel's per size (encrypted,
// upwards, the first MTU with GSO on), with 95% intervals. "" for a run
// without kquic cells.
func KquicNote(d *results.Document) string {
	hasGo := slices.ContainsFunc(d.Cells, func(c results.CellResult) bool {
		return c.Transport == "kquic" && c.Driver == "" && c.Status == results.StatusOK
	})
	if !hasGo {
		return ""
	}
	if !hasNativeKquic(d) {
		note := "kquic is this process through the Go bindings (and Go's runtime) over kernel QUIC, not the kernel's figure alone"
		if ds, _ := matrix.DriverSpecOf(matrix.KernelDriver()); ds.Hint != "" {
			note += ": " + ds.Hint + " sets the kernel's own beside it"
		}
		return note
	}
	if len(d.Spec.MTUs) == 0 {
		return ""
	}
	var parts []string
	for _, size := range d.Spec.Sizes {
		base := baseCell(d, size, d.Spec.MTUs[0], true, true)
		cs, ok := cellsOf(d, "kquic", kernelKquic(), base, base)
		if !ok {
			continue
		}
		if iv, err := ratio.Of(cs.Num, cs.Den); err == nil {
			parts = append(parts, fmt.Sprintf("%s %s", SizeName(size), iv))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("kquic is the kernel's figure (the %s driver's tool), kquic(Go) this process's through the Go bindings", matrix.KernelDriver())
	}
	return fmt.Sprintf("kquic is the kernel's figure (the %s driver's tool), kquic(Go) this process's through the Go bindings: kquic(Go) / kquic, encrypted, MTU %d: %s", matrix.KernelDriver(), d.Spec.MTUs[0], strings.Join(parts, ", "))
}
