//go:build linux

// Package bench is the engine of `kqbench matrix`: it runs the cartesian
// product of transports, message sizes, MTUs, GSO on/off, encryption on/off,
// directions and stream counts over a veth pair between two network
// namespaces, measures receiver-side goodput and CPU for each cell over
// several repeats, and keeps every raw sample in a versioned JSON document
// that an interrupted run can resume from. Package bench/transport has the
// transports, bench/topo the topology; rendering is in this package. In
// two-host mode the Runner's ClientSide is this host's device and its
// ServerSide a kqbench server on the peer (package bench/remote). With
// Spec.Drivers "native" the single-host runner also measures each transport
// with C tools between the same namespaces (native.go): the module's
// perf_test, iperf3, openssl.
package bench
