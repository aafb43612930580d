//go:build !linux

package fuzz

import "fmt"

// MarkLine is the kernel log line a "kmsg" mark writes.
const MarkLine = "WARNING: kqbench fuzz: the oracle test's line"

// Act does what an input's mark says; only on Linux.
func Act(mark string) error { return fmt.Errorf("fuzz: mark %q: Linux only", mark) }
