//go:build linux

// Package bench is the engine of `kqbench matrix`: it runs the cartesian
// product of transports, message sizes, MTUs, GSO on/off, encryption on/off,
// directions and stream counts over a veth pair between two network
// namespaces, measures receiver-side goodput and CPU for each cell over
// several repeats, and keeps every raw sample in a versioned JSON document
// that an interrupted run can resume from. Package bench/transport has the
// transports, bench/topo the topology; rendering is in this package. In
// two-host mode the Runner's ClientSide is this host's device and its
// ServerSide a kqbench server on the peer (package bench/remote).
//
// A matrix may impair the link (Spec.Netem), compare congestion controls
// (Spec.CC, an axis), set the QUIC flow-control window (Spec.Window), and
// measure per-stream completion times instead of goodput (ModeStreams);
// Brakes says which flow-control window or overflowing receive buffer held
// a cell back.
//
// With Runner.ProfileDir a Profiler records perf call graphs over the
// samples' windows and keeps each cell's as folded stacks (package
// bench/flame).
//
// With Spec.Drivers "native" the single-host runner also measures each
// transport with C tools between the same namespaces (native.go): the
// module's perf_test, iperf3, openssl.
package bench
