//go:build linux

// Package profile records call graphs of the whole machine with perf over
// the measured windows of a matrix's samples, and keeps each cell's as
// folded stacks (package bench/flame) beside the results.
package profile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"kquic.dev/bench/flame"
	"kquic.dev/bench/host"
	"kquic.dev/bench/results"
)

// DefaultFrequency is how often perf samples every CPU during a
// profiled window (Hz): odd, so as not to beat with the kernel's timer.
// Under emulation (qemu TCG) it is EmulatedFrequency: there perf
// at 999 Hz took a fifth of the samples asked for and cut kquic's goodput
// to a quarter, where at 99 Hz it took all and cost nothing visible.
const (
	DefaultFrequency  = 999
	EmulatedFrequency = 99
)

// Profiler records call graphs of the whole machine (perf record -a -g)
// over every sample's measured window, and keeps each cell's as folded
// stacks (package bench/flame) in Dir, merged over the cell's samples.
//
// One perf record runs for the whole matrix with its events disabled, and
// is enabled for each sample through its control pipe (perf takes long to
// start: 20 s in a TCG guest); at the end one perf script folds it all,
// each sample's stack going to the cell whose window holds its time stamp
// (perf stamps them on CLOCK_MONOTONIC).
type Profiler struct {
	// Dir receives a cell's folded stacks as FileName(cell).
	Dir string
	// Perf is the perf binary, Event the event it samples on ("cycles"
	// where the CPU has counters, else "cpu-clock", as in a TCG guest).
	Perf, Event string
	// Frequency is the samples per second and CPU.
	Frequency int

	restore  []func()
	tmp      string
	cmd      *exec.Cmd
	ctl      *os.File // perf's control pipe, our end
	ack      *bufio.Reader
	ackFile  *os.File
	output   bytes.Buffer // perf record's messages
	windows  []profileWindow
	finished bool
}

// profileWindow is one sample's window on CLOCK_MONOTONIC, in seconds.
type profileWindow struct {
	key        string
	begin, end float64
}

// Start finds perf, chooses its event, lets it see the kernel's and
// modules' symbols (kernel.kptr_restrict=0, kernel.perf_event_paranoid=-1,
// both put back by Finish), and starts perf record, waiting until it
// listens, sampling freq times a second (0: DefaultFrequency, or
// EmulatedFrequency under emulation). It fails, naming the package,
// without perf.
func Start(dir string, freq int) (*Profiler, error) {
	if freq <= 0 {
		freq = DefaultFrequency
		if host.CurrentMachine("").Kind == results.MachineEmulated {
			freq = EmulatedFrequency
		}
	}
	perf, err := FindPerf()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	p := &Profiler{Dir: dir, Perf: perf, Event: "cpu-clock", Frequency: freq}
	if hardwareSampling() {
		p.Event = "cycles"
	}
	for _, s := range []struct{ name, value string }{
		{"kernel/kptr_restrict", "0"},
		{"kernel/perf_event_paranoid", "-1"},
	} {
		path := "/proc/sys/" + s.name
		old, err := os.ReadFile(path)
		if err != nil || strings.TrimSpace(string(old)) == s.value {
			continue
		}
		if err := os.WriteFile(path, []byte(s.value), 0o644); err != nil {
			p.close()
			return nil, fmt.Errorf("profile: set %s=%s so that perf resolves kernel symbols: %w (run as root)", strings.ReplaceAll(s.name, "/", "."), s.value, err)
		}
		p.restore = append(p.restore, func() { os.WriteFile(path, old, 0o644) })
	}
	if err := p.start(); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (p *Profiler) start() error {
	var err error
	if p.tmp, err = os.MkdirTemp("", "kqbench-perf-"); err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	ackR, ackW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return fmt.Errorf("profile: %w", err)
	}
	// The child's fd 3 and 4: its control and acknowledgement pipes.
	p.cmd = exec.Command(p.Perf, "record", "-a", "-g", "-e", p.Event, "-F", fmt.Sprint(p.Frequency),
		"-k", "CLOCK_MONOTONIC", "--no-buildid", "--no-buildid-cache", "-D", "-1",
		"--control", "fd:3,4", "-o", filepath.Join(p.tmp, "perf.data"))
	p.cmd.ExtraFiles = []*os.File{ctlR, ackW}
	p.cmd.Stdout, p.cmd.Stderr = &p.output, &p.output
	err = p.cmd.Start()
	ctlR.Close()
	ackW.Close()
	if err != nil {
		p.cmd = nil
		ctlW.Close()
		ackR.Close()
		return fmt.Errorf("profile: %s: %w", p.Perf, err)
	}
	p.ctl, p.ackFile, p.ack = ctlW, ackR, bufio.NewReader(ackR)
	// Its events start disabled; an acknowledged "disable" says it listens.
	if err := p.command("disable", 3*time.Minute); err != nil {
		return fmt.Errorf("profile: perf record did not start: %w", err)
	}
	return nil
}

// command sends perf record a control command and waits for its "ack".
func (p *Profiler) command(c string, timeout time.Duration) error {
	if _, err := p.ctl.WriteString(c + "\n"); err != nil {
		return fmt.Errorf("perf record control: %w (%s)", err, firstLine(p.output.Bytes()))
	}
	p.ackFile.SetReadDeadline(time.Now().Add(timeout))
	line, err := p.ack.ReadString('\n')
	if err != nil {
		return fmt.Errorf("no acknowledgement of %q within %v: %v (%s)", c, timeout, err, firstLine(p.output.Bytes()))
	}
	if strings.Trim(line, "\x00 \n") != "ack" { // perf sends "ack\n\x00"
		return fmt.Errorf("perf record answered %q to %q", line, c)
	}
	return nil
}

// Finish stops perf record, folds the samples of every window into their
// cells' profiles, writes them to Dir with a flamegraph each (<cell>.svg),
// and names both in the cell's result in doc (Profile and ProfileSVG,
// relative to base, the results file's directory). It
// puts the sysctls back; it does nothing the second time.
func (p *Profiler) Finish(doc *results.Document, base string) error {
	if p.finished {
		return nil
	}
	p.finished = true
	defer p.close()
	err := p.finish(doc, base)
	if err != nil { // said in the results too: the run's log may be discarded
		keys := map[string]bool{}
		for _, w := range p.windows {
			keys[w.key] = true
		}
		for i := range doc.Cells {
			if r := &doc.Cells[i]; keys[r.Key] && r.Profile == "" {
				r.ProfileNote = strings.TrimSpace(r.ProfileNote + " " + err.Error())
			}
		}
	}
	return err
}

func (p *Profiler) finish(doc *results.Document, base string) error {
	if err := p.stop(); err != nil {
		return err
	}
	sort.Slice(p.windows, func(i, j int) bool { return p.windows[i].begin < p.windows[j].begin })
	bucket := func(ts float64) (string, bool) {
		i := sort.Search(len(p.windows), func(i int) bool { return p.windows[i].end > ts })
		if i < len(p.windows) && p.windows[i].begin <= ts {
			return p.windows[i].key, true
		}
		return "", false
	}
	cmd := exec.Command(p.Perf, "script", "-i", filepath.Join(p.tmp, "perf.data"), "-F", "comm,pid,tid,cpu,time,event,ip,sym,dso")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("profile: %s script: %w", p.Perf, err)
	}
	// The kernel's symbols, read now, while the modules the recording
	// saw are loaded, name the kernel frames perf could not.
	var ksyms *kallsyms
	var ksymsOnce sync.Once
	resolve := func(addr uint64) (string, bool) {
		ksymsOnce.Do(func() { ksyms = loadKallsyms() })
		return ksyms.lookup(addr)
	}
	cells, st, perr := flame.SplitPerfScript(out, bucket, flame.ScriptOptions{Resolve: resolve})
	if perr != nil {
		io.Copy(io.Discard, out)
	}
	werr := cmd.Wait()
	if perr != nil {
		return fmt.Errorf("profile: %w", perr)
	}
	if werr != nil {
		return fmt.Errorf("profile: perf script: %v: %s", werr, firstLine(stderr.Bytes()))
	}
	nwin := map[string]int{}
	for _, w := range p.windows {
		nwin[w.key]++
	}
	var errs []error
	for i := range doc.Cells {
		r := &doc.Cells[i]
		if nwin[r.Key] == 0 {
			continue
		}
		f := cells[r.Key]
		r.ProfileNote = fmt.Sprintf("perf record -a -g -e %s -F %d: %d samples in %d windows", p.Event, p.Frequency, f.Total(), nwin[r.Key])
		r.Profile, r.ProfileSVG = "", ""
		if len(f) == 0 {
			continue
		}
		file := filepath.Join(p.Dir, FileName(r.Cell))
		if err := f.WriteFile(file); err != nil {
			errs = append(errs, fmt.Errorf("profile: %w", err))
			continue
		}
		r.Profile = relTo(base, file)
		svg := strings.TrimSuffix(file, ".folded") + ".svg"
		if err := writeFlameSVG(svg, f, r.Key, r.ProfileNote); err != nil {
			errs = append(errs, err)
			continue
		}
		r.ProfileSVG = relTo(base, svg)
	}
	if st.Samples == 0 {
		errs = append(errs, fmt.Errorf("profile: perf recorded no samples in the %d windows (%s)", len(p.windows), firstLine(stderr.Bytes())))
	}
	return errors.Join(errs...)
}

// relTo is file relative to base, where it is under it.
func relTo(base, file string) string {
	if rel, err := filepath.Rel(base, file); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return file
}

// writeFlameSVG draws a cell's flamegraph, its frames of the QUIC module
// highlighted.
func writeFlameSVG(path string, f flame.Folded, title, subtitle string) error {
	var b bytes.Buffer
	if err := flame.SVG(&b, f, flame.Options{Title: title, Subtitle: subtitle, Highlight: "quic_"}); err != nil {
		return fmt.Errorf("profile: %s: %w", path, err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	return nil
}

// stop ends perf record with SIGINT, as Ctrl-C would.
func (p *Profiler) stop() error {
	if p.cmd == nil {
		return nil
	}
	cmd := p.cmd
	p.cmd = nil
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		// perf record -a ends by raising the SIGINT it was stopped with.
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
				err = nil
			}
		}
		if err != nil {
			return fmt.Errorf("profile: perf record: %v: %s", err, lastLine(p.output.Bytes()))
		}
		return nil
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		<-done
		return errors.New("profile: perf record did not stop within 3 minutes of SIGINT")
	}
}

// close stops perf if it runs, removes its files and puts the sysctls back.
func (p *Profiler) close() {
	p.stop()
	if p.ctl != nil {
		p.ctl.Close()
		p.ackFile.Close()
		p.ctl = nil
	}
	if p.tmp != "" {
		os.RemoveAll(p.tmp)
		p.tmp = ""
	}
	for i := len(p.restore) - 1; i >= 0; i-- {
		p.restore[i]()
	}
	p.restore = nil
}
