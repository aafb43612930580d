//go:build !linux

package main

import "github.com/spf13/cobra"

func guestInit() {}

func commandExit(error) (int, bool) { return 0, false }

// platformCommands is empty off Linux: matrix, doctor, vm and the others
// need its kernel; compare, report, plot and flame run here.
func platformCommands() []*cobra.Command { return nil }
