// Package flame turns `perf script` output into folded stacks and draws them
// as flamegraphs.
//
// Folded stacks are Brendan Gregg's format: one line per distinct stack,
// the frames from the root to the leaf joined by ';', a space and the
// number of samples ("kqbench;sendmsg;quic_sendmsg 42"). ParsePerfScript
// folds the output of `perf script` (with call graphs, perf record -g);
// ReadFolded and Folded.WriteTo read and write the format, Merge adds
// profiles together.
//
// SVG draws a flamegraph: one box per frame, its width proportional to the
// samples through it, the root at the bottom, with each box's name, samples
// and share of the total in its tooltip. DiffSVG draws a differential one
// between two profiles A and B as difffolded.pl and flamegraph.pl do: the
// widths are B's (or A's, Options.Negate), A is scaled to B's total, and a
// frame is red where B spends more than A, blue where less, the deeper the
// colour the larger the change. The output is a self-contained SVG and the
// same input always gives the same bytes.
package flame
