//go:build !linux

// Command kqbench benchmarks and checks the Linux kernel QUIC implementation.
// It runs on Linux only: elsewhere it says so and exits with status 1.
package main

import (
	"fmt"
	"os"
	"runtime"
)

func main() {
	fmt.Fprintf(os.Stderr, "kqbench runs on Linux only (this is %s)\n", runtime.GOOS)
	os.Exit(1)
}
