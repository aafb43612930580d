//go:build linux

package vm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"kquic.dev/kmod"
)

// Defaults for Config fields left zero.
const (
	DefaultMemory  = 2048
	DefaultCPUs    = 2
	DefaultTimeout = 10 * time.Minute
)

// InitBinaryEnv names the environment variable that points [Run] at a static
// init binary when the running executable cannot serve as one.
const InitBinaryEnv = "KQVM_INIT_BINARY"

// Run boots cfg.Kernel under qemu and runs args in it. It returns the
// command's result; a command that exits non-zero gives an [*ExitError] as
// well, and a guest that fails to run the command a [*GuestError]. Nothing of
// qemu is left running when Run returns.
func Run(ctx context.Context, cfg Config, args []string) (*Result, error) {
	m, err := Start(ctx, cfg, args)
	if err != nil {
		return nil, err
	}
	return m.Wait()
}

// bootAttempts bounds the boots of one Run whose kernel panics before the
// command starts.
const bootAttempts = 3

type job struct {
	cfg   Config
	args  []string
	work  string
	spec  spec
	tree  *kmod.Tree
	early []string // host paths of the 9p modules
	// initLibs are the init's loader and libraries (none for a static one).
	initLibs []string
	fs       []share
	accel    string
	// name is the guest's name in a pair ("A", "B"), else empty.
	name string
	// nic is the guest's end of a pair's link, else nil.
	nic *nicPlan

	mu sync.Mutex // guards the fields below, which change per boot
	// ctl is the connected control port of the current boot.
	ctl net.Conn
	// started is set once the command of the current boot has started.
	started bool
	// stopped is set by Stop.
	stopped bool
	// pids are the qemu processes started, one per boot.
	pids []int
	// ready is closed when the guest has reported itself up (its info),
	// ready to start the command.
	ready     chan struct{}
	readyOnce sync.Once

	// stdin carries cfg.Stdin to the boot whose command runs: one reader
	// for the job, so a boot that died before its command started (and
	// is booted again) takes none of it.
	stdinOnce sync.Once
	stdin     chan []byte
}

// stdinChunks starts the job's one reader of cfg.Stdin, once, and returns
// its chunks; the channel is closed at the input's end.
func (j *job) stdinChunks() <-chan []byte {
	j.stdinOnce.Do(func() {
		j.stdin = make(chan []byte)
		go func() {
			defer close(j.stdin)
			for {
				b := make([]byte, 32*1024)
				n, err := j.cfg.Stdin.Read(b)
				if n > 0 {
					j.stdin <- b[:n]
				}
				if err != nil {
					return
				}
			}
		}()
	})
	return j.stdin
}

// send writes a request to the guest's init on the control port.
func (j *job) send(req string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.ctl == nil {
		return fmt.Errorf("vm: %s: the control port is not connected", j.what())
	}
	_, err := j.ctl.Write([]byte(req + "\n"))
	return err
}

type share struct {
	host string
	ro   bool
}

// run boots the guest once and waits for its command's result, qemu's end
// or the job's timeout.
func (j *job) run(ctx context.Context) (*Result, error) {
	ctx, cancel := context.WithTimeout(ctx, j.cfg.Timeout)
	defer cancel()
	// The watchdog (watch) stops a guest that made no progress with cause
	// errStalled.
	ctx, stopStalled := context.WithCancelCause(ctx)
	defer stopStalled(nil)

	var (
		wg  sync.WaitGroup
		con = &consoleTail{}
		act = &activity{}
		st  = &status{act: act, dumped: make(chan struct{})}
	)
	j.mu.Lock()
	j.ctl, j.started = nil, false
	j.mu.Unlock()
	// The input goes to the guest once its command has started: a boot
	// that dies before then (and is booted again) loses none of it.
	startedCh, attemptDone := make(chan struct{}), make(chan struct{})
	defer close(attemptDone)
	var startedOnce sync.Once
	st.onStart = func() {
		j.mu.Lock()
		j.started = true
		j.mu.Unlock()
		startedOnce.Do(func() { close(startedCh) })
	}
	st.onInfo = func() { j.readyOnce.Do(func() { close(j.ready) }) }
	lns, err := j.servePorts(&wg, con, st, act, startedCh, attemptDone)
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	if err != nil {
		return nil, err
	}

	var qerr bytes.Buffer
	cmd := exec.Command(j.cfg.Qemu, j.qemuArgs()...)
	cmd.Stdin = nil
	cmd.Stdout = &qerr
	cmd.Stderr = &qerr
	if j.nic != nil {
		cmd.ExtraFiles = j.nic.files
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("vm: start %s: %w", j.cfg.Qemu, err)
	}
	j.mu.Lock()
	j.pids = append(j.pids, cmd.Process.Pid)
	j.mu.Unlock()
	done := make(chan error, 1)
	qemuDone := make(chan struct{})
	go func() {
		err := cmd.Wait()
		close(qemuDone)
		done <- err
	}()
	stalled := make(chan *stall, 1)
	go func() { stalled <- j.watch(ctx, cmd.Process.Pid, act, st, qemuDone, stopStalled) }()

	var qemuErr error
	timedOut := false
	select {
	case qemuErr = <-done:
	case <-ctx.Done():
		timedOut = true
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	end := time.Now()
	for _, l := range lns {
		l.Close() // unblocks an Accept that qemu never reached
	}
	waitTimeout(&wg, 5*time.Second)
	stl := <-stalled // it returns once qemu has exited

	st.mu.Lock()
	defer st.mu.Unlock()
	j.mu.Lock()
	stopped := j.stopped
	j.mu.Unlock()
	j.mu.Lock()
	pids := append([]int(nil), j.pids...)
	j.mu.Unlock()
	res := &Result{Accel: j.accel, Name: j.name, Info: st.info, NIC: st.nic, Stopped: stopped, ExitCode: -1, QemuPIDs: pids}
	if !st.started.IsZero() {
		res.Boot = st.started.Sub(start)
		res.Run = end.Sub(st.started)
	}
	if stl != nil {
		return res, j.stallError(stl, con.tail(25))
	}
	return j.outcome(ctx, res, st, con, timedOut, qerr.String(), qemuErr)
}

// servePorts listens on the guest's ports and serves each once qemu
// connects (wg counts them): the console into con, the status into st, the
// output to the caller's writers, the control port, and the input once
// started is closed, until done is. The listeners are the caller's to
// close, those opened before an error too.
func (j *job) servePorts(wg *sync.WaitGroup, con *consoleTail, st *status, act *activity, started, done <-chan struct{}) ([]net.Listener, error) {
	outs := map[string]io.Writer{
		"console":  marking{act, io.MultiWriter(con, orDiscard(j.cfg.Console))},
		portStdout: marking{act, orDiscard(j.cfg.Stdout)},
		portStderr: marking{act, orDiscard(j.cfg.Stderr)},
	}
	var lns []net.Listener
	for _, name := range j.ports() {
		l, err := net.Listen("unix", j.sock(name))
		if err != nil {
			return lns, fmt.Errorf("vm: listen for guest port %s: %w", name, err)
		}
		lns = append(lns, l)
		wg.Add(1)
		go func(name string, l net.Listener) {
			defer wg.Done()
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			switch name {
			case portStatus:
				st.read(c)
				return
			case portCtl:
				j.mu.Lock()
				j.ctl = c
				j.mu.Unlock()
				io.Copy(io.Discard, c)
				j.mu.Lock()
				j.ctl = nil
				j.mu.Unlock()
				return
			case portStdin:
				// The input's end closes our side: the guest's reads then
				// return end of file. The job's reader, still open when
				// the guest stops, is left behind (the input is the
				// caller's to close).
				go func() {
					select {
					case <-started:
					case <-done:
						return
					}
					in := j.stdinChunks()
					for {
						select {
						case b, ok := <-in:
							if !ok {
								c.(*net.UnixConn).CloseWrite()
								return
							}
							if _, err := c.Write(b); err != nil {
								return
							}
						case <-done:
							return
						}
					}
				}()
				io.Copy(io.Discard, c)
				return
			}
			io.Copy(outs[name], c)
		}(name, l)
	}
	return lns, nil
}

// outcome is the boot's result and error: stopped, timed out, the init's
// failure, a kernel panic, qemu's end without a result (qemuOut, qemuErr:
// what qemu said and how it exited), or the command's exit status. st is
// locked.
func (j *job) outcome(ctx context.Context, res *Result, st *status, con *consoleTail, timedOut bool, qemuOut string, qemuErr error) (*Result, error) {
	tail := con.tail(25)
	switch {
	case timedOut && errors.Is(context.Cause(ctx), errStopped):
		return res, nil
	case timedOut && errors.Is(ctx.Err(), context.DeadlineExceeded):
		what := j.what() + " did not boot"
		if !st.started.IsZero() {
			what = fmt.Sprintf("the command %q of %s did not finish", strings.Join(j.args, " "), j.what())
			if j.name == "" {
				what = fmt.Sprintf("the guest command %q did not finish", strings.Join(j.args, " "))
			}
		}
		return res, &GuestError{Msg: fmt.Sprintf("vm: %s within %v; qemu was stopped", what, j.cfg.Timeout),
			Fix: "raise the timeout (--timeout) if it is slow, or look for a hang", Console: tail}
	case timedOut:
		return res, fmt.Errorf("vm: %s stopped: %w", j.what(), ctx.Err())
	case st.err != "":
		who := "guest"
		if j.name != "" {
			who = "guest " + j.name + "'s"
		}
		return res, &GuestError{Msg: fmt.Sprintf("vm: %s init failed: %s", who, st.err), Console: nil}
	case st.exit == nil:
		if p := con.panicLine(); p != "" {
			when := "while booting"
			if !st.started.IsZero() {
				when = "while the command ran"
			}
			return res, &GuestError{Msg: fmt.Sprintf("vm: %s kernel panicked %s: %s", j.what(), when, p),
				Console: tail, bootPanic: st.started.IsZero()}
		}
		msg := "vm: " + j.what() + " stopped without reporting the command's result"
		if s := strings.TrimSpace(qemuOut); s != "" {
			msg += "; qemu said: " + s
		} else if qemuErr != nil {
			msg += fmt.Sprintf("; qemu: %v", qemuErr)
		}
		return res, &GuestError{Msg: msg,
			Fix:     "check that the kernel boots (a bzImage for x86-64 with virtio and 9p) and that the init binary calls vm.GuestMain",
			Console: tail,
		}
	}
	res.ExitCode = *st.exit
	if res.ExitCode != 0 && !res.Stopped {
		return res, &ExitError{Args: j.args, Code: res.ExitCode, Guest: j.name}
	}
	return res, nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	c := make(chan struct{})
	go func() { wg.Wait(); close(c) }()
	select {
	case <-c:
	case <-time.After(d):
	}
}
