//go:build linux

package h3

// StartProcess is startProcess, for the h2load comparison (package
// h3_test), which runs the engine and so cannot be in this package.
var StartProcess = startProcess
