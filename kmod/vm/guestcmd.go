//go:build linux

package vm

// The guest's command: the virtio ports it talks through, its run as a
// child of init, and the host's requests while it runs.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// openPort opens the virtio serial port the host named, for writing.
func openPort(name string) (*os.File, error) { return openPortFlag(name, os.O_WRONLY) }

// openPortFlag opens the virtio serial port the host named.
func openPortFlag(name string, flag int) (*os.File, error) {
	dirs, _ := filepath.Glob("/sys/class/virtio-ports/*/name")
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil || strings.TrimSpace(string(b)) != name {
			continue
		}
		dev := filepath.Join("/dev", filepath.Base(filepath.Dir(p)))
		return os.OpenFile(dev, flag, 0)
	}
	return nil, fmt.Errorf("no virtio port named %s", name)
}

// exec runs the command as a child of init, reaping every other process that
// is orphaned meanwhile, and returns its exit code (128+signal if killed).
func (g *guest) exec(s *spec) (int, error) {
	cio, err := g.openIO(s)
	if err != nil {
		return 0, err
	}
	path := s.Args[0]
	if !strings.Contains(path, "/") {
		if p, err := lookPath(path, s.Env); err == nil {
			path = p
		} else {
			return 127, stage("find the command", err)
		}
	}
	// The host's requests come on the control port, opened before the
	// command starts so that none is missed.
	var reqs *bufio.Scanner
	ctl, err := openPortFlag(portCtl, os.O_RDONLY)
	if err == nil {
		reqs = bufio.NewScanner(ctl)
	}
	if s.WaitGo {
		if err := awaitGo(reqs, err); err != nil {
			return 0, err
		}
	}
	var before nicCounters
	if g.nicDev != "" {
		before = readNICCounters("/sys", "/proc", g.nicDev)
	}
	p, err := os.StartProcess(path, s.Args, &os.ProcAttr{
		Dir:   s.Dir,
		Env:   s.Env,
		Files: []*os.File{cio.stdin, cio.out, cio.err},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	cio.out.Close() // the command's copies keep the pipes open
	cio.err.Close()
	if err != nil {
		return 127, stage("start the command", err)
	}
	g.say("start")
	if reqs != nil {
		go g.serveCtl(ctl, reqs, p.Pid)
	}
	return g.reap(p, cio.relayed, before)
}

// commandIO is a command's input and output: its stdin, the pipes it
// writes into, which init copies to the output ports, and the ends of
// those copies.
type commandIO struct {
	stdin, out, err *os.File
	relayed         []<-chan struct{}
}

// openIO opens the output ports and the pipes the command writes into,
// and its input: the input port, or /dev/null.
func (g *guest) openIO(s *spec) (*commandIO, error) {
	stdout, err := openPort(portStdout)
	if err != nil {
		return nil, stage("open output ports", err)
	}
	stderr, err := openPort(portStderr)
	if err != nil {
		return nil, stage("open output ports", err)
	}
	g.outs = map[string]*os.File{portStdout: stdout, portStderr: stderr}
	// The command writes into pipes that init copies to the ports (relay).
	cmdOut, outDone, err := relayTo(stdout)
	if err != nil {
		return nil, stage("open output pipes", err)
	}
	cmdErr, errDone, err := relayTo(stderr)
	if err != nil {
		return nil, stage("open output pipes", err)
	}
	stdin, err := os.Open("/dev/null")
	if s.Stdin {
		stdin, err = openPortFlag(portStdin, os.O_RDONLY)
	}
	if err != nil {
		return nil, stage("open the command's input", err)
	}
	return &commandIO{stdin: stdin, out: cmdOut, err: cmdErr, relayed: []<-chan struct{}{outDone, errDone}}, nil
}

// awaitGo waits for the host's go on the control port (a pair's guests
// start their commands together); openErr is the port's opening error
// when reqs is nil.
func awaitGo(reqs *bufio.Scanner, openErr error) error {
	if reqs == nil {
		return stage("open the control port", openErr)
	}
	for reqs.Scan() {
		if reqs.Text() == "go" {
			return nil
		}
	}
	err := reqs.Err()
	if err == nil {
		err = errors.New("the host closed the control port first")
	}
	return stage("wait for the host's go", err)
}

// reap waits for the command p, reaping every orphan re-parented to init
// meanwhile; then it kills whatever is left, lets the output relays pass
// on what they have (up to relayDrain), says how much the NIC was used
// since before, and returns the command's exit code (128+signal if
// killed).
func (g *guest) reap(p *os.Process, relayed []<-chan struct{}, before nicCounters) (int, error) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return 0, stage("wait for the command", err)
		}
		if pid != p.Pid {
			continue // an orphan re-parented to init
		}
		unix.Kill(-1, unix.SIGKILL) // leave nothing running behind it
		// Nothing writes to the pipes now: the relays end once they have
		// passed on what is left.
		drained := time.After(relayDrain)
		for _, d := range relayed {
			select {
			case <-d:
			case <-drained:
			}
		}
		if g.nicDev != "" {
			u := readNICCounters("/sys", "/proc", g.nicDev).usageSince(before)
			if b, err := json.Marshal(u); err == nil {
				g.say("nic %s", b)
			}
		}
		switch {
		case ws.Exited():
			return ws.ExitStatus(), nil
		case ws.Signaled():
			return 128 + int(ws.Signal()), nil
		}
		return 255, nil
	}
}

func lookPath(file string, env []string) (string, error) {
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, file)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in PATH %s", file, path)
}

// serveCtl acts on the host's requests until the host closes the port:
// "term" sends SIGTERM to the command's process group (it leads its own
// session); "dump" answers with the guest's tasks, their kernel stacks and
// the kernel log (guestDump) on the status port; "quit" sends SIGQUIT to the
// process group (a Go program prints its goroutines on its standard error).
func (g *guest) serveCtl(ctl *os.File, sc *bufio.Scanner, pid int) {
	defer ctl.Close()
	for sc.Scan() {
		switch sc.Text() {
		case "term":
			unix.Kill(-pid, unix.SIGTERM)
		case "dump":
			d, _ := json.Marshal(guestDump(pid, g.outs))
			g.say("dump %s", d)
		case "quit":
			unix.Kill(-pid, unix.SIGQUIT)
		}
	}
}
