//go:build linux

// Package bench is the engine of `kqbench matrix`: the Runner runs the
// cells of a matrix.Spec over a veth pair between two network namespaces
// (package bench/topo), or against a kqbench server on a peer (package
// bench/remote), and writes every raw sample to a results file as it is
// measured (package bench/results), which an interrupted run resumes from.
//
// The runner is written once for every mode: the plan, device-configuration
// groups (MTU and GSO), round-robin rounds rotating by one (schedule.go),
// a sample disturbed by the hypervisor's steal taken again once, extra
// rounds for wide cells up to Spec.MaxRepeat, progress, saving. What a
// sample measures is a mode's (package bench/mode): each mode is a folder
// whose parts register themselves, and bench/mode/all imports them all,
// one line each (modes.go imports that):
//
//	bench/mode/bulk       goodput of streams one way (the default)
//	bench/mode/rr         request/response: round trips, latency percentiles
//	bench/mode/streams    objects at once: per-stream completion times
//	bench/mode/handshake  connection setups: handshakes/s, time to first byte
//	bench/mode/h3         web workloads over HTTP/3 and HTTP/2 (its engine in h3/web)
//	bench/mode/native     the native driver: the same cells by C tools
//
// The packages around it:
//
//	bench/matrix     the spec, its cells and keys, validation (any system)
//	bench/results    the results file, summaries, Compare (any system)
//	bench/render     tables, CSV, --explain, brakes, comparisons (any system)
//	                 (the three name no mode: they look each up in registries
//	                 the modes' folders fill)
//	bench/side       the two ends of a sample and the wire protocol
//	bench/host       environment, CPU accounting, cycles, pinning
//	bench/profile    perf call graphs over the samples' windows (--profile)
//	bench/transport  the transports; bench/topo the veth topology
//	bench/counters, bench/capture, bench/latency, bench/flame  the probes and tools
//	bench/plot, bench/report, bench/ab  figures, the HTML report, A/B runs (any system but ab's guests)
package bench
