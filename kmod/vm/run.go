//go:build linux

package vm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"kquic.dev/internal/cpio"
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

func prepare(cfg *Config, args []string, nic *nicPlan) (*job, error) {
	if cfg.Memory == 0 {
		cfg.Memory = DefaultMemory
	}
	if cfg.CPUs == 0 {
		cfg.CPUs = DefaultCPUs
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.IdleLimit == 0 {
		cfg.IdleLimit = DefaultIdleLimit
	}
	if cfg.Env == nil {
		cfg.Env = os.Environ()
	}
	if cfg.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("vm: working directory: %w", err)
		}
		cfg.Dir = wd
	}
	if cfg.Qemu == "" {
		cfg.Qemu = "qemu-system-x86_64"
	}
	qemu, err := exec.LookPath(cfg.Qemu)
	if err != nil {
		return nil, fmt.Errorf("vm: %s not found: install it (apt-get install qemu-system-x86)", cfg.Qemu)
	}
	cfg.Qemu = qemu
	if cfg.Kernel == "" {
		return nil, errors.New("vm: no kernel image given: pass --kernel (or run `kqbench kernel fetch` for Debian's)")
	}
	if st, err := os.Stat(cfg.Kernel); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("vm: kernel image %s: not a readable file", cfg.Kernel)
	}
	if err := checkForwards(cfg.Forwards); err != nil {
		return nil, err
	}
	if cfg.Modules == "" {
		return nil, errors.New("vm: no module tree given: pass --modules (the lib/modules/<release> directory of the kernel)")
	}
	var initLibs []string
	if cfg.Init, initLibs, err = initBinary(cfg.Init); err != nil {
		return nil, err
	}
	j := &job{cfg: *cfg, args: args, initLibs: initLibs, nic: nic}
	if nic != nil {
		j.name = nic.name
	}
	if j.tree, err = kmod.OpenTree(cfg.Modules); err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}
	if j.accel, err = pickAccel(cfg.Accel); err != nil {
		return nil, err
	}
	// The 9p stack and overlayfs that make the root come from the initramfs.
	if j.early, err = j.tree.Resolve("9p", "9pnet_virtio", "overlay"); err != nil {
		return nil, fmt.Errorf("vm: the guest needs 9p to share the host's files: %w", err)
	}
	var load []string
	for _, m := range cfg.Load {
		// "name?" loads the module only where the tree has it.
		if name, optional := strings.CutSuffix(m, "?"); optional {
			if j.tree.Has(name) {
				load = append(load, name)
			}
			continue
		}
		load = append(load, m)
	}
	mods, err := j.tree.Resolve(load...)
	if err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}
	if nic != nil || len(cfg.Forwards) > 0 {
		// The link's driver, when the kernel has it as a module.
		more, err := j.tree.Resolve("virtio_net")
		if err != nil {
			return nil, fmt.Errorf("vm: %s needs virtio_net for the link: %w", j.what(), err)
		}
		mods = append(mods, more...)
	}
	var report []string
	for _, f := range cfg.ModuleFiles {
		more, err := j.tree.ResolveFile(f)
		if err != nil {
			return nil, fmt.Errorf("vm: %w", err)
		}
		mods = append(mods, more...)
		report = append(report, kmod.ModuleName(f))
	}
	j.spec = spec{
		Args:       args,
		Env:        cfg.Env,
		Dir:        cfg.Dir,
		Modules:    dedupe(mods),
		ModulesDir: abs(cfg.Modules),
		Release:    j.tree.Release(),
		Stdin:      cfg.Stdin != nil,
		Report:     report,
	}
	if len(cfg.Forwards) > 0 {
		j.spec.FwdNIC = forwardNIC()
		j.spec.Env = append(slices.Clip(j.spec.Env), forwardEnv())
	}
	if nic != nil {
		j.spec.Name = strings.ToLower(nic.name)
		j.spec.NIC = &nic.spec
		j.spec.WaitGo = true
	}
	j.ready = make(chan struct{})
	for _, m := range j.early {
		j.spec.EarlyModules = append(j.spec.EarlyModules, "/modules/"+filepath.Base(m))
	}
	if err := j.planShares(); err != nil {
		return nil, err
	}
	if j.work, err = os.MkdirTemp("", "kqvm-"); err != nil {
		return nil, fmt.Errorf("vm: work directory: %w", err)
	}
	if err := j.writeInitramfs(); err != nil {
		os.RemoveAll(j.work)
		return nil, err
	}
	return j, nil
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func pickAccel(a string) (string, error) {
	switch a {
	case "", "auto":
		if kmod.Probe(kmod.FeatureKVM) == nil {
			return "kvm", nil
		}
		return "tcg", nil
	case "kvm", "tcg", "tcg-multi":
		return a, nil
	}
	return "", fmt.Errorf("vm: accelerator %q: use kvm, tcg, tcg-multi or auto", a)
}

// initBinary finds the binary to serve as the guest's init: one that calls
// vm.GuestMain (kqbench), static or dynamically linked.
func initBinary(given string) (string, []string, error) {
	var candidates []string
	switch {
	case given != "":
		candidates = []string{given}
	case os.Getenv(InitBinaryEnv) != "":
		candidates = []string{os.Getenv(InitBinaryEnv)}
	default:
		if exe, err := os.Executable(); err == nil {
			candidates = append(candidates, exe)
		}
	}
	var why []string
	for _, c := range candidates {
		libs, err := initLibs(c)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		return abs(c), libs, nil
	}
	return "", nil, fmt.Errorf("vm: no usable init: it must be a binary that calls vm.GuestMain, such as kqbench (`make build`); set %s to it (%s)",
		InitBinaryEnv, strings.Join(why, "; "))
}

// shadowed are the guest directories that do not show the host's content.
// (The guest's /tmp shows the host's, read-only, under the overlay.)
var shadowed = []string{"/run"}

var forbidden = []string{"/dev", "/proc", "/sys"}

func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// planShares decides which host directories get their own 9p share: those the
// user wants writable, and those the command needs that the guest's own
// mounts (/tmp, /run) would hide.
func (j *job) planShares() error {
	var want []share
	for _, s := range j.cfg.Shares {
		p := abs(s)
		st, err := os.Stat(p)
		if err != nil || !st.IsDir() {
			return fmt.Errorf("vm: share %s: not a directory on the host (create it first)", s)
		}
		want = append(want, share{p, false})
	}
	hidden := func(p string) bool {
		for _, d := range shadowed {
			if under(p, d) {
				return true
			}
		}
		return false
	}
	// A command in a temporary directory is a build product (go test's
	// binaries): files written beside it (coverage profiles) come back.
	if a := j.args[0]; strings.Contains(a, "/") && (hidden(abs(a)) || under(abs(a), os.TempDir())) {
		want = append(want, share{filepath.Dir(abs(a)), false})
	}
	if hidden(j.cfg.Dir) {
		want = append(want, share{abs(j.cfg.Dir), false})
	}
	for _, m := range j.spec.Modules {
		if hidden(m) && !under(m, j.spec.ModulesDir) {
			want = append(want, share{filepath.Dir(m), true})
		}
	}
	if hidden(j.spec.ModulesDir) {
		// Shown at its own path; /lib/modules/<release> binds to it.
		want = append(want, share{j.spec.ModulesDir, true})
	}
	for _, s := range want {
		for _, d := range forbidden {
			if under(s.host, d) {
				return fmt.Errorf("vm: %s cannot be shared with the guest: the guest has its own %s", s.host, d)
			}
		}
	}
	// Outer directories first; a directory inside a share of the same or a
	// stronger mode needs no share of its own.
	sort.SliceStable(want, func(a, b int) bool { return len(want[a].host) < len(want[b].host) })
	for _, s := range want {
		covered := false
		for _, have := range j.fs {
			if under(s.host, have.host) && (!have.ro || s.ro) {
				covered = true
			}
		}
		if !covered {
			j.fs = append(j.fs, s)
		}
	}
	for i, s := range j.fs {
		j.spec.Shares = append(j.spec.Shares, mount{Tag: fmt.Sprintf("kqvm-%d", i), Path: s.host, ReadOnly: s.ro})
	}
	return nil
}

func (j *job) writeInitramfs() error {
	f, err := os.Create(filepath.Join(j.work, "initramfs.cpio"))
	if err != nil {
		return fmt.Errorf("vm: initramfs: %w", err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	w := cpio.NewWriter(bw)
	for _, d := range []string{"dev", "proc", "sys", "newroot", "modules"} {
		w.Dir(d, 0o755)
	}
	w.CharDev("dev/console", 0o600, 5, 1)
	w.CharDev("dev/null", 0o666, 1, 3)
	w.CopyFile("init", j.cfg.Init)
	// A dynamically linked init needs its loader and libraries before the
	// host's root is mounted.
	for _, l := range j.initLibs {
		w.CopyFile(strings.TrimPrefix(l, "/"), l)
	}
	for _, m := range j.early {
		w.CopyFile("modules/"+filepath.Base(m), m)
	}
	js, err := json.Marshal(j.spec)
	if err != nil {
		return fmt.Errorf("vm: encode job: %w", err)
	}
	w.File(strings.TrimPrefix(specPath, "/"), 0o644, js)
	// The writer's errors are sticky: Close reports the first one.
	if err := w.Close(); err != nil {
		return fmt.Errorf("vm: initramfs: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("vm: initramfs: %w", err)
	}
	return nil
}

func (j *job) qemuArgs() []string {
	cmdline := []string{
		"console=ttyS0", "quiet", "loglevel=4", "panic=-1", "rdinit=/init", guestMarker,
		"random.trust_cpu=on", "8250.nr_uarts=1", "mitigations=off",
	}
	accel, cpu := "kvm", "host"
	switch j.accel {
	case "tcg":
		// One host thread for all vCPUs: with multi-threaded TCG the guest
		// kernel crashes now and then when it patches its own code (static
		// keys, tracepoints switched on by eBPF) while another vCPU runs it.
		accel, cpu = "tcg,thread=single", "max"
	case "tcg-multi":
		accel, cpu = "tcg,thread=multi", "max"
	}
	a := []string{
		"-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none", "-no-reboot",
		"-machine", "pc", "-accel", accel, "-cpu", cpu,
		"-smp", strconv.Itoa(j.cfg.CPUs), "-m", strconv.Itoa(j.cfg.Memory),
		"-kernel", j.cfg.Kernel, "-initrd", filepath.Join(j.work, "initramfs.cpio"),
		"-append", strings.Join(cmdline, " "),
		"-chardev", "socket,id=con,path=" + j.sock("console"), "-serial", "chardev:con",
		"-device", "virtio-serial-pci,id=vser",
	}
	for _, p := range j.ports() {
		if p == "console" {
			continue
		}
		a = append(a, "-chardev", "socket,id="+p+",path="+j.sock(p),
			"-device", "virtserialport,bus=vser.0,chardev="+p+",name="+p)
	}
	fsdev := func(id, path, tag string, ro bool) {
		opt := "local,id=" + id + ",path=" + path + ",security_model=none,multidevs=remap"
		if ro {
			opt += ",readonly=on"
		}
		a = append(a, "-fsdev", opt, "-device", "virtio-9p-pci,fsdev="+id+",mount_tag="+tag)
	}
	fsdev("fsroot", "/", rootTag, true)
	for i, s := range j.spec.Shares {
		fsdev(fmt.Sprintf("fs%d", i), s.Path, s.Tag, s.ReadOnly)
	}
	if j.nic != nil {
		a = append(a, j.nic.qemu...)
	}
	return append(a, forwardQemu(j.cfg.Forwards)...)
}

// ports are the guest's character devices the host serves: the console,
// the command's output and status, and its input when the caller gives one.
func (j *job) ports() []string {
	p := []string{"console", portStdout, portStderr, portStatus, portCtl}
	if j.cfg.Stdin != nil {
		p = append(p, portStdin)
	}
	return p
}

func (j *job) sock(name string) string { return filepath.Join(j.work, name+".sock") }

// consoleTail keeps the last lines of the kernel console.
type consoleTail struct {
	mu    sync.Mutex
	lines []string
	part  []byte
	// panic is the kernel's first panic line, kept when the trace that
	// follows pushes it out of the tail.
	panic string
}

func (c *consoleTail) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.part = append(c.part, b...)
	for {
		i := bytes.IndexByte(c.part, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimRight(string(c.part[:i]), "\r")
		if k := strings.Index(line, "Kernel panic"); k >= 0 && c.panic == "" {
			c.panic = strings.TrimSpace(line[k:])
		}
		c.lines = append(c.lines, line)
		c.part = c.part[i+1:]
		if len(c.lines) > 40 {
			c.lines = c.lines[len(c.lines)-40:]
		}
	}
	return len(b), nil
}

func (c *consoleTail) tail(n int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.lines
	if len(c.part) > 0 {
		l = append(l[:len(l):len(l)], string(c.part))
	}
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return l
}

type status struct {
	mu      sync.Mutex
	started time.Time
	exit    *int
	err     string
	info    *GuestInfo
	nic     *NICUsage
	// dump is the guest's answer to the watchdog's request ("dump");
	// dumped is closed when it has come.
	dump       string
	dumped     chan struct{}
	dumpedOnce sync.Once
	// act is marked at each line.
	act *activity
	// onStart and onInfo are called when the command starts and when the
	// guest has reported itself.
	onStart, onInfo func()
}

func (s *status) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		if s.act != nil {
			s.act.mark()
		}
		verb, arg, _ := strings.Cut(sc.Text(), " ")
		var then func()
		s.mu.Lock()
		switch verb {
		case "start":
			s.started = time.Now()
			then = s.onStart
		case "info":
			var in GuestInfo
			if json.Unmarshal([]byte(arg), &in) == nil {
				s.info = &in
			}
			then = s.onInfo
		case "nic":
			var u NICUsage
			if json.Unmarshal([]byte(arg), &u) == nil {
				s.nic = &u
			}
		case "dump":
			var d string
			if json.Unmarshal([]byte(arg), &d) != nil {
				d = arg
			}
			s.dump = d
			if s.dumped != nil {
				s.dumpedOnce.Do(func() { close(s.dumped) })
			}
		case "exit":
			if n, err := strconv.Atoi(arg); err == nil {
				s.exit = &n
			}
		case "error":
			var msg string
			if json.Unmarshal([]byte(arg), &msg) != nil {
				msg = arg
			}
			s.err = msg
		}
		s.mu.Unlock()
		if then != nil {
			then()
		}
	}
}

func (j *job) run(ctx context.Context) (*Result, error) {
	ctx, cancel := context.WithTimeout(ctx, j.cfg.Timeout)
	defer cancel()
	// The watchdog (watch) stops a guest that made no progress with cause
	// errStalled.
	ctx, stopStalled := context.WithCancelCause(ctx)
	defer stopStalled(nil)

	var (
		wg   sync.WaitGroup
		con  = &consoleTail{}
		act  = &activity{}
		st   = &status{act: act, dumped: make(chan struct{})}
		outs = map[string]io.Writer{
			"console":  marking{act, io.MultiWriter(con, orDiscard(j.cfg.Console))},
			portStdout: marking{act, orDiscard(j.cfg.Stdout)},
			portStderr: marking{act, orDiscard(j.cfg.Stderr)},
		}
	)
	j.mu.Lock()
	j.ctl, j.started = nil, false
	j.mu.Unlock()
	st.onStart = func() {
		j.mu.Lock()
		j.started = true
		j.mu.Unlock()
	}
	st.onInfo = func() { j.readyOnce.Do(func() { close(j.ready) }) }
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for _, name := range j.ports() {
		l, err := net.Listen("unix", j.sock(name))
		if err != nil {
			return nil, fmt.Errorf("vm: listen for guest port %s: %w", name, err)
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
				// return end of file. A reader still open when the guest
				// stops is left behind (it is the caller's to close).
				go func() {
					io.Copy(c, j.cfg.Stdin)
					c.(*net.UnixConn).CloseWrite()
				}()
				io.Copy(io.Discard, c)
				return
			}
			io.Copy(outs[name], c)
		}(name, l)
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
	tail := con.tail(25)
	switch {
	case stl != nil:
		return res, j.stallError(stl, tail)
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
		if s := strings.TrimSpace(qerr.String()); s != "" {
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
	if res.ExitCode != 0 && !stopped {
		return res, &ExitError{Args: j.args, Code: res.ExitCode, Guest: j.name}
	}
	return res, nil
}

// panicLine is the kernel's panic message, if it printed one.
func (c *consoleTail) panicLine() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.panic == "" {
		if k := strings.Index(string(c.part), "Kernel panic"); k >= 0 {
			return strings.TrimSpace(string(c.part[k:]))
		}
	}
	return c.panic
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
