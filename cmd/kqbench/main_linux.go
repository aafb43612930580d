package main

import (
	"errors"

	"github.com/spf13/cobra"

	"kquic.dev/kmod/vm"
)

// guestInit runs the guest's init when this process is one (it never
// returns then).
func guestInit() {
	if vm.IsGuestInit() {
		vm.GuestMain()
	}
}

// commandExit is the exit status a command's error asks for: a guest
// command's own.
func commandExit(err error) (int, bool) {
	var exit *vm.ExitError
	if errors.As(err, &exit) {
		return exit.Code, true
	}
	return 0, false
}

// platformCommands are the commands that measure, boot guests or load
// modules: Linux's only.
func platformCommands() []*cobra.Command {
	return []*cobra.Command{
		newDoctorCmd(), newVMCmd(), newKernelCmd(), newModuleCmd(), newMatrixCmd(), newServerCmd(), newClientCmd(),
		newPerfCmd(), newABCmd(), newABWorkerCmd(), newBisectCmd(), newAgentCmd(), newConformanceCmd(), newFuzzCmd(), newInteropCmd(),
	}
}
