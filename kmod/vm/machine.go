//go:build linux

package vm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// A Machine is a guest started by [Start], running its command. It ends when
// the command exits, the guest stops (a panic, its timeout, the context) or
// [Machine.Stop] ends it; [Machine.Wait] then says how.
type Machine struct {
	j      *job
	cancel context.CancelCauseFunc
	done   chan struct{}
	res    *Result
	err    error
}

// errStopped is the cause of a machine's context when Stop killed it.
var errStopped = errors.New("vm: stopped by the host")

// Start boots cfg.Kernel under qemu and starts args in it, returning once
// qemu runs (the boot goes on meanwhile). The machine runs until its command
// exits, cfg.Timeout passes or ctx ends.
func Start(ctx context.Context, cfg Config, args []string) (*Machine, error) {
	return start(ctx, cfg, args, nil)
}

func start(ctx context.Context, cfg Config, args []string, nic *nicPlan) (*Machine, error) {
	if len(args) == 0 {
		return nil, errors.New("vm: no command to run in the guest")
	}
	j, err := prepare(&cfg, args, nic)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	m := &Machine{j: j, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		defer cancel(nil)
		defer os.RemoveAll(j.work)
		m.res, m.err = j.attempts(ctx)
	}()
	return m, nil
}

// attempts boots the guest until its command starts: under TCG a guest
// kernel now and then dies while it boots (qemu's multi-threaded TCG and the
// kernel patching its own code on another vCPU). The command has not started
// then, so booting again is safe.
func (j *job) attempts(ctx context.Context) (*Result, error) {
	for attempt := 1; ; attempt++ {
		res, err := j.run(ctx)
		var ge *GuestError
		if attempt < bootAttempts && errors.As(err, &ge) && ge.bootPanic && ctx.Err() == nil && !j.isReady() {
			if w := j.cfg.notices(); w != nil {
				fmt.Fprintf(w, "kqbench vm: %s kernel panicked while booting (attempt %d of %d); booting again\n", j.what(), attempt, bootAttempts)
			}
			continue
		}
		return res, err
	}
}

// isReady reports whether a guest of a pair has been up: it may have been
// told to start its command, so it is not booted again.
func (j *job) isReady() bool {
	if !j.spec.WaitGo {
		return false
	}
	select {
	case <-j.ready:
		return true
	default:
		return false
	}
}

// what names the guest in messages: "the guest", or "guest B" in a pair.
func (j *job) what() string {
	if j.name == "" {
		return "the guest"
	}
	return "guest " + j.name
}

// Wait waits for the machine to end and returns its result, as [Run] does.
// After [Machine.Stop], the command's exit status is in the result but not
// an error: only a guest that failed otherwise (a panic) is.
func (m *Machine) Wait() (*Result, error) {
	<-m.done
	return m.res, m.err
}

// Done is closed when the machine has ended and its qemu is gone.
func (m *Machine) Done() <-chan struct{} { return m.done }

// Stop asks the guest's command to end (SIGTERM to its process group) and,
// if it has not ended within grace, stops the guest. It returns at once;
// [Machine.Wait] waits for the end. A guest still booting is stopped at once.
func (m *Machine) Stop(grace time.Duration) {
	if !m.j.requestStop() {
		m.cancel(errStopped)
		return
	}
	go func() {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-m.done:
		case <-t.C:
			m.cancel(errStopped)
		}
	}()
}

// requestStop marks the job stopped and sends the guest's init the request
// to end the command; false if the command has not started (or its control
// port is not connected), when there is nothing to ask.
func (j *job) requestStop() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.stopped = true
	if j.ctl == nil || !j.started {
		return false
	}
	if _, err := j.ctl.Write([]byte("term\n")); err != nil {
		return false
	}
	return true
}
