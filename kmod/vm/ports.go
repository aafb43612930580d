//go:build linux

package vm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

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
