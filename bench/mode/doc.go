// Package mode is the contract between kqbench's runner (package bench) and
// what it measures: a Mode takes one sample of a cell, and the runner does
// the rest once for every mode (the plan, device-configuration groups,
// round-robin rounds, retakes on steal, adaptive repeats, progress,
// saving). The package also holds what every mode's sample shares: the
// probes' Window and the Span a measured interval leaves. It is Linux's.
//
// A mode is one folder under bench/mode, whose parts register themselves,
// as k6's executors do, each with the layer that uses it:
//
//	spec.go           (every OS) its name, what it measures, its flags, checks,
//	                  cells, keys and own part of a spec: matrix.RegisterModeSpec
//	result.go         (every OS) its figures in a results file, their summary,
//	                  compare's metric and figures: results.RegisterPayload
//	render.go         (every OS) its tables, CSV and explanation: render.RegisterView
//	measure_linux.go  its measuring: Register (this package)
//	remote_linux.go   where it has one, its half on a kqbench server in two-host
//	                  mode: a stream server by marker (side.RegisterStream) or
//	                  operations of the control protocol (side.RegisterOp)
//
// A part the mode does not need is left out: the generic layers' defaults
// (the default mode's checks, cells and keys, and the goodput tables, CSV
// and counters of every cell's common figures) stand in. A driver (the
// native one's C tools) registers the same way: matrix.RegisterDriver,
// RegisterDriver. One line in package bench/mode/all imports the folder,
// which kqbench (on every OS, so that compare, report and plot read its
// results on macOS and Windows), the runner and the tests that read
// results import. The generic layers (results, render, report, plot,
// remote, the runner, kqbench) name no mode: they look each up in these
// registries.
package mode
