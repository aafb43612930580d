// Package plot draws the figures of kqbench results with gonum.org/v1/plot:
// goodput against message size per transport, CPU per byte, the --explain
// counters per MB, and, for a comparison of two runs, the change per cell.
//
// Building a figure and drawing it are separate: Goodput, CPUPerByte,
// Counters and Change return Figures (a grid of panels, each with its
// series of points, every point naming the cell it came from), and
// Figure.Render draws one as SVG or PNG. A figure has one panel per MTU and
// GSO setting (and encryption, where the run has both), one series per
// transport and driver as the tables have a column each ("kquic", and
// "kquic(C)" in the same colour, dashed, where the native C tools measured
// it too), message size on a logarithmic x axis.
package plot
