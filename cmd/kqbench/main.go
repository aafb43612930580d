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
//	kqbench compare OLD NEW   two results files side by side, as benchstat
//	kqbench report FILES      their tables, and with --html a page with plots
//	kqbench plot FILES        their figures, SVG or PNG
//
// compare, report, plot and flame read and draw results files on any
// system; the commands that measure or boot a guest are Linux's only
// (main_linux.go).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	guestInit()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	var status exitStatus
	if errors.As(err, &status) {
		os.Exit(int(status))
	}
	if code, ok := commandExit(err); ok {
		os.Exit(code)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kqbench:", err)
		os.Exit(125)
	}
}

// exitStatus is an error that asks for an exit status and says nothing
// more: a verdict (kqbench ab --exit-code, bisect) already printed.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
