//go:build linux

package vm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultIdleLimit is Config.IdleLimit when left zero.
const DefaultIdleLimit = 3 * time.Minute

// The watchdog's settings: qemu below busyShare of one host CPU counts as
// idle; a stalled guest has dumpWait to send its stacks and quitWait to end
// its command after SIGQUIT.
const (
	busyShare = 0.2
	dumpWait  = 30 * time.Second
	quitWait  = 5 * time.Second
)

// errStalled is the cause of a run's context when the watchdog ended it.
var errStalled = errors.New("vm: the guest made no progress")

// activity records when the guest last showed life: output on its console
// or the command's, or a status line.
type activity struct{ at atomic.Int64 }

func (a *activity) mark()           { a.at.Store(time.Now().UnixNano()) }
func (a *activity) last() time.Time { return time.Unix(0, a.at.Load()) }

// marking is a writer that marks the activity of what passes through it.
type marking struct {
	a *activity
	w io.Writer
}

func (m marking) Write(b []byte) (int, error) {
	m.a.mark()
	return m.w.Write(b)
}

// cpuTime is a process's CPU time so far, user and system, from
// /proc/PID/stat (its threads included).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(b)
	k := strings.LastIndexByte(s, ')')
	if k < 0 {
		return 0, fmt.Errorf("vm: /proc/%d/stat: unexpected %q", pid, s)
	}
	f := strings.Fields(s[k+1:])
	// After the name: state is field 3 of stat, utime 14 and stime 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("vm: /proc/%d/stat: too few fields", pid)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	sy, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("vm: /proc/%d/stat: unexpected %q", pid, s)
	}
	// USER_HZ is 100 on every Linux the harness runs on.
	return time.Duration(u+sy) * 10 * time.Millisecond, nil
}

// stall is what the watchdog found of a guest that made no progress.
type stall struct {
	// idle is how long the guest showed no life; cpu is qemu's CPU time
	// over it.
	idle, cpu time.Duration
	// dump is the guest's answer to the request for its tasks (guestDump),
	// empty if it sent none within dumpWait.
	dump string
}

// watch ends a run whose guest shows no life for cfg.IdleLimit once its
// command has started: no output on the console or the command's ports, no
// status from init, and qemu (the vCPUs, and the 9p and network back ends the
// guest's files and links go through) using less than busyShare of a host
// CPU. It asks the guest's init for a dump of its tasks, then for SIGQUIT to
// the command (a Go program prints its goroutines), and stops the run with
// cause errStalled; what it found is its result. It returns nil, having done
// nothing, once qemu has exited or ctx ends first.
func (j *job) watch(ctx context.Context, pid int, act *activity, st *status, qemuDone <-chan struct{}, stop context.CancelCauseFunc) *stall {
	limit := j.cfg.IdleLimit
	if limit < 0 {
		return nil
	}
	tick := min(max(limit/6, 500*time.Millisecond), 10*time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	var (
		activeAt       = time.Now()
		lastT          = activeAt
		lastCPU, _     = cpuTime(pid)
		cpuAtActive    = lastCPU
		started, other bool
	)
	for {
		select {
		case <-qemuDone:
			return nil
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		now := time.Now()
		cpu, err := cpuTime(pid)
		if err != nil {
			return nil // qemu is gone
		}
		st.mu.Lock()
		started = !st.started.IsZero()
		st.mu.Unlock()
		j.mu.Lock()
		other = j.stopped // Stop is ending the command: its grace bounds it
		j.mu.Unlock()
		busy := float64(cpu-lastCPU) >= busyShare*float64(now.Sub(lastT))
		lastCPU, lastT = cpu, now
		if !started || other || busy {
			activeAt, cpuAtActive = now, cpu
			continue
		}
		if a := act.last(); a.After(activeAt) {
			activeAt, cpuAtActive = a, cpu
		}
		if now.Sub(activeAt) < limit {
			continue
		}
		s := &stall{idle: now.Sub(activeAt), cpu: cpu - cpuAtActive}
		if w := j.cfg.notices(); w != nil {
			fmt.Fprintf(w, "kqbench vm: %s made no progress for %v (no output, qemu used %v of CPU): asking for its stacks\n",
				j.what(), s.idle.Round(time.Second), s.cpu)
		}
		if j.send("dump") == nil {
			w := time.NewTimer(dumpWait)
			select {
			case <-st.dumped:
				st.mu.Lock()
				s.dump = st.dump
				st.mu.Unlock()
			case <-w.C:
			case <-qemuDone:
			case <-ctx.Done():
			}
			w.Stop()
		}
		if j.send("quit") == nil {
			w := time.NewTimer(quitWait)
			select {
			case <-w.C:
			case <-qemuDone:
			case <-ctx.Done():
			}
			w.Stop()
		}
		stop(errStalled)
		return s
	}
}

// stallError is the error of a run the watchdog ended.
func (j *job) stallError(s *stall, console []string) *GuestError {
	what := fmt.Sprintf("the guest command %q", strings.Join(j.args, " "))
	if j.name != "" {
		what = fmt.Sprintf("the command %q of %s", strings.Join(j.args, " "), j.what())
	}
	e := &GuestError{
		Msg: fmt.Sprintf("vm: %s made no progress for %v (no output, no status, qemu used %v of CPU); qemu was stopped",
			what, s.idle.Round(time.Second), s.cpu),
		Fix:     "the guest's tasks below show where it waits; raise the limit (--idle-limit) if it is quiet on purpose",
		Console: console,
		Dump:    s.dump,
	}
	if s.dump == "" {
		e.Dump = fmt.Sprintf("(the guest did not answer the request for its stacks within %v)\n", dumpWait)
	}
	return e
}
