//go:build linux

// Command kqbench benchmarks and checks the Linux kernel QUIC implementation
// against kernel TLS, TCP and userspace QUIC, and runs commands and tests in a
// VM booted with a given kernel and module.
//
//	kqbench doctor            which kernel features this machine has
//	kqbench kernel fetch      download the default Debian guest kernel
//	kqbench vm -- CMD ARGS    run a command in a guest (also as go test -exec)
//	kqbench matrix            the benchmark matrix (--peer: against kqbench server)
//	kqbench server            the peer end of two-host benchmarks
//	kqbench client            one cell against a kqbench server
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"kquic.dev/kmod/vm"
)

func main() {
	if vm.IsGuestInit() {
		vm.GuestMain() // never returns
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	var exit *vm.ExitError
	switch {
	case errors.As(err, &exit):
		os.Exit(exit.Code)
	case err != nil:
		fmt.Fprintln(os.Stderr, "kqbench:", err)
		os.Exit(125)
	}
}
