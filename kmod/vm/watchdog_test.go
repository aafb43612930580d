//go:build linux

package vm_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod/vm"
)

// TestWatchdogStopsStalledGuest: a command that stops answering (a shell
// waiting for a sleep that never ends) is stopped once the idle limit has
// passed with no output and qemu idle, long before the run's timeout, with
// an error that says so and holds the guest's tasks: the sleep's kernel
// stack and the kernel log.
func TestWatchdogStopsStalledGuest(t *testing.T) {
	cfg := testenv.VM(t)
	cfg.Timeout = 10 * time.Minute
	cfg.IdleLimit = 15 * time.Second
	var out, errb bytes.Buffer
	cfg.Stdout, cfg.Stderr = &out, &errb
	start := time.Now()
	res, err := vm.Run(context.Background(), cfg, []string{"/bin/sh", "-c", "echo going quiet; sleep 100000; echo woke"})
	took := time.Since(start)
	var ge *vm.GuestError
	if !errors.As(err, &ge) {
		t.Fatalf("Run = %v, want a GuestError from the watchdog", err)
	}
	t.Logf("took %v (boot %v); error:\n%v", took, res.Boot, err)
	msg := err.Error()
	for _, want := range []string{
		"made no progress for",
		"sleep 100000",      // the command, named
		"(sleep) S",         // the sleeping process and its state
		"nanosleep",         // its kernel stack: hrtimer_nanosleep, do_nanosleep
		"[the command]",     // the shell, marked
		"kernel log (end):", // and the kernel's log
		"sysrq: Show Blocked State",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q", want)
		}
	}
	if out.String() != "going quiet\n" {
		t.Errorf("output %q", out.String())
	}
	if !strings.Contains(errb.String(), "made no progress") {
		t.Errorf("the watchdog did not say on stderr what it does: %q", errb.String())
	}
	if took > 3*time.Minute {
		t.Errorf("the run took %v: the watchdog (15s) did not end it well before the timeout", took)
	}
	assertNoQemuLeft(t)
}

// TestWatchdogSparesBusyGuest: a command that computes without a word for
// longer than the idle limit keeps qemu busy and runs to its end.
func TestWatchdogSparesBusyGuest(t *testing.T) {
	cfg := testenv.VM(t)
	cfg.IdleLimit = 5 * time.Second
	var out bytes.Buffer
	cfg.Stdout = &out
	script := `end=$(($(cut -d. -f1 /proc/uptime)+20)); n=0; while [ $(cut -d. -f1 /proc/uptime) -lt $end ]; do n=$((n+1)); done; echo done`
	if _, err := vm.Run(context.Background(), cfg, []string{"/bin/sh", "-c", script}); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if out.String() != "done\n" {
		t.Errorf("output %q", out.String())
	}
}
