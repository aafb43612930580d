// Package render writes kqbench results for people: the terminal tables,
// the CSV summary, --explain's costs and the brakes found in a run, and
// comparisons (kqbench compare's table, JSON and CSV). A mode's own view
// (RegisterView: its tables, CSV, explanation) stands where it has one;
// the goodput view of every cell's common figures, in the shape of the
// kernel QUIC module's README with its ratios, where not. It reads
// results.Document only, builds on every platform, and measures nothing:
// a colleague's results file renders on a laptop as it did where it was
// measured.
package render

// SamePeerWarning is the line tables print for a peer that is this machine.
const SamePeerWarning = "WARNING: the peer is this same machine (same boot ID): these are not two-host figures, both ends shared this machine's CPUs and memory"
