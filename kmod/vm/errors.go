//go:build linux

package vm

import (
	"fmt"
	"strings"
)

// ExitError is a command that ran in the guest and exited with a non-zero
// status.
type ExitError struct {
	Args []string
	Code int
	// Guest names the guest of a pair ("A", "B"); empty for a lone guest.
	Guest string
}

func (e *ExitError) Error() string {
	if e.Guest != "" {
		return fmt.Sprintf("the command %q of guest %s exited with status %d", strings.Join(e.Args, " "), e.Guest, e.Code)
	}
	return fmt.Sprintf("guest command %q exited with status %d", strings.Join(e.Args, " "), e.Code)
}

// GuestError is a guest that did not run the command to its end: it did not
// boot, its init failed (mounting, loading a module), or it ran out of time.
// Console holds the last lines the kernel printed.
type GuestError struct {
	// What failed, as a sentence.
	Msg string
	// Fix says what to do about it, when known.
	Fix string
	// Console is the tail of the kernel's console.
	Console []string
	// Dump is what the guest's tasks were doing (their states and kernel
	// stacks, then the end of the kernel log), for a guest that made no
	// progress; else empty.
	Dump string

	bootPanic bool // the kernel panicked before the command started
}

func (e *GuestError) Error() string {
	var b strings.Builder
	b.WriteString(e.Msg)
	if e.Fix != "" {
		b.WriteString(" (")
		b.WriteString(e.Fix)
		b.WriteString(")")
	}
	if len(e.Console) > 0 {
		b.WriteString("\nlast kernel console lines:")
		for _, l := range e.Console {
			b.WriteString("\n  ")
			b.WriteString(l)
		}
	}
	if e.Dump != "" {
		b.WriteString("\nthe guest's tasks, their kernel stacks and its kernel log:\n")
		b.WriteString(strings.TrimRight(e.Dump, "\n"))
	}
	return b.String()
}
