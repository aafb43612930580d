//go:build linux

// Package bench is the engine of `kqbench matrix`: it runs the cells of a
// matrix.Spec (transports, message sizes, MTUs, GSO on/off, encryption
// on/off, directions, stream counts, congestion controls, drivers) over a
// veth pair between two network namespaces, or against a kqbench server on
// a peer (package bench/remote), and writes every raw sample to a results
// file as it is measured (package bench/results), which an interrupted run
// resumes from.
//
// The packages around it:
//
//	bench/matrix     the spec, its cells and keys, validation (any system)
//	bench/results    the results file, summaries, Compare (any system)
//	bench/render     tables, CSV, --explain, brakes, comparisons (any system)
//	bench/host       environment, CPU accounting, cycles, pinning (Linux)
//	bench/transport  the transports; bench/topo the veth topology
//	bench/counters, bench/capture, bench/latency, bench/flame  the probes and tools
//	bench/plot, bench/report, bench/ab  figures, the HTML report, A/B runs (any system but ab's guests)
//
// A device configuration's samples run on one schedule (schedule.go):
// round-robin with rotation, a disturbed sample taken again once, extra
// rounds for wide cells up to Spec.MaxRepeat. The modes (bulk, rr,
// streams, handshake) and the native driver's C tools (native.go: the
// module's perf_test, iperf3, openssl) each measure one sample.
//
// With Runner.ProfileDir a Profiler records perf call graphs over the
// samples' windows and keeps each cell's as folded stacks (package
// bench/flame).
package bench
