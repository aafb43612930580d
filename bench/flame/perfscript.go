package flame

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// ScriptOptions chooses what ParsePerfScript and SplitPerfScript keep.
type ScriptOptions struct {
	// From and To, when not zero, keep only the samples whose time stamp
	// (perf script's seconds, on the clock perf recorded with) is in
	// [From, To).
	From, To float64
	// NoComm leaves out the root frame naming the sampled thread's command.
	NoComm bool
	// Resolve, if set, names a kernel frame perf could not name, by its
	// address (the kernel's own symbol table read while the modules were
	// loaded: perf's maps of modules can be wrong, and put the frames of
	// one module under another's name).
	Resolve func(addr uint64) (string, bool)
}

// ScriptStats says what ParsePerfScript read.
type ScriptStats struct {
	// Samples is the number of samples folded, Outside those left out by
	// the time window.
	Samples, Outside int64
	// Unparsed counts the lines that should have started a sample and
	// did not (their frames are left out); when nothing else was read,
	// they are an error.
	Unparsed int64
	// First and Last are the time stamps of the first and last sample
	// read (0 when none had one).
	First, Last float64
}

// header: "comm pid[/tid] [cpu] secs.usecs: [period] event:". The command
// may hold spaces; the cpu is there with -a.
var scriptHeader = regexp.MustCompile(`^(\S.*?)\s+(-?\d+)(?:/(-?\d+))?\s+(?:\[(\d+)\]\s+)?(\d+\.\d+):\s`)

// frame: "\taddr symbol[+0xoff] (dso)".
var scriptFrame = regexp.MustCompile(`^\s+([0-9a-fA-F]+)\s+(.*?)\s+\((.*)\)\s*$`)

var unnamed = regexp.MustCompile(`^:-?\d+$`)

var symOffset = regexp.MustCompile(`\+0x[0-9a-fA-F]+$`)

// ParsePerfScript folds the output of `perf script` for a recording made
// with call graphs (perf record -g): each sample counts once for its stack,
// the thread's command as the root frame (unless NoComm), then the frames
// from the outermost caller to the sampled function (a thread perf knows
// only by number, ":tid", takes the command of another thread of its
// process where a sample named it). Symbol offsets are
// dropped; kernel frames (those of the kernel image and of modules, which
// perf names "[kernel.kallsyms]" and "[quic]") get the suffix "_[k]" as
// stackcollapse-perf.pl --kernel gives them; a frame perf could not name is
// "[dso]" by its binary's name, or "[unknown]".
func ParsePerfScript(r io.Reader, o ScriptOptions) (Folded, ScriptStats, error) {
	in := func(ts float64) (string, bool) {
		return "", (o.From == 0 || ts >= o.From) && (o.To == 0 || ts < o.To)
	}
	m, st, err := SplitPerfScript(r, in, o)
	if err != nil {
		return nil, st, err
	}
	if m[""] == nil {
		return Folded{}, st, nil
	}
	return m[""], st, nil
}

// SplitPerfScript folds the output of `perf script` as ParsePerfScript
// does, into one profile per name: bucket names the profile a sample
// stamped at time ts goes to, or leaves it out (ok false; counted in
// ScriptStats.Outside). ScriptOptions.From and To are not used.
func SplitPerfScript(r io.Reader, bucket func(ts float64) (name string, ok bool), o ScriptOptions) (map[string]Folded, ScriptStats, error) {
	out := map[string]Folded{}
	var st ScriptStats
	var firstBad string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var (
		in     bool                  // inside a sample
		keep   bool                  // the sample is in a bucket
		name   string                // which
		comm   string                // its command
		frames []string              // leaf first
		comms  = map[string]string{} // by pid, for threads perf knows by number only
	)
	flush := func() {
		if in && keep {
			stack := make([]string, 0, len(frames)+1)
			if !o.NoComm {
				stack = append(stack, comm)
			}
			for i := len(frames) - 1; i >= 0; i-- {
				stack = append(stack, frames[i])
			}
			if len(stack) > 0 {
				f := out[name]
				if f == nil {
					f = Folded{}
					out[name] = f
				}
				f.Add(stack, 1)
				st.Samples++
			}
		}
		in, keep, frames = false, false, frames[:0]
	}
	for line := 1; sc.Scan(); line++ {
		t := sc.Text()
		if strings.TrimSpace(t) == "" {
			flush()
			continue
		}
		if t[0] == ' ' || t[0] == '\t' {
			if !in {
				continue // a frame with no sample: perf's own notes
			}
			m := scriptFrame.FindStringSubmatch(t)
			if m == nil {
				continue // not a frame (a srcline, an inline note)
			}
			frames = append(frames, o.frameName(m[1], m[2], m[3]))
			continue
		}
		flush()
		m := scriptHeader.FindStringSubmatch(t)
		if m == nil {
			if !strings.HasPrefix(t, "#") {
				st.Unparsed++
				if firstBad == "" {
					firstBad = fmt.Sprintf("line %d: %q", line, t)
				}
			}
			continue
		}
		ts, _ := strconv.ParseFloat(m[5], 64)
		if st.First == 0 || ts < st.First {
			st.First = ts
		}
		if ts > st.Last {
			st.Last = ts
		}
		in, comm = true, m[1]
		// A thread perf saw no COMM event for (one created while its events
		// were disabled) is ":tid": named after its process where known.
		if unnamed.MatchString(comm) {
			if c, ok := comms[m[2]]; ok {
				comm = c
			}
		} else {
			comms[m[2]] = comm
		}
		name, keep = bucket(ts)
		if !keep {
			st.Outside++
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, st, fmt.Errorf("perf script output: %w", err)
	}
	if st.Unparsed > 0 && st.Samples+st.Outside == 0 {
		return nil, st, fmt.Errorf("perf script output, %s: not a sample header (want \"comm pid [cpu] secs: event:\", as perf script prints with perf record -g)", firstBad)
	}
	return out, st, nil
}

// frameName is a frame's name in the folded stacks: a kernel frame perf
// could not name is named by Resolve where it can.
func (o ScriptOptions) frameName(addr, sym, dso string) string {
	kernel := strings.HasPrefix(dso, "[") && dso != "[unknown]" && dso != "[vdso]" && dso != "[vsyscall]"
	if s := strings.TrimSpace(sym); kernel && o.Resolve != nil && (s == "" || s == "[unknown]") {
		if a, err := strconv.ParseUint(addr, 16, 64); err == nil {
			if name, ok := o.Resolve(a); ok {
				return name + "_[k]"
			}
		}
	}
	return frameName(sym, dso)
}

// frameName is a frame's name in the folded stacks.
func frameName(sym, dso string) string {
	sym = symOffset.ReplaceAllString(strings.TrimSpace(sym), "")
	kernel := strings.HasPrefix(dso, "[") && dso != "[unknown]" && dso != "[vdso]" && dso != "[vsyscall]"
	if sym == "" || sym == "[unknown]" {
		switch {
		case dso == "" || dso == "[unknown]":
			return "[unknown]"
		case strings.HasPrefix(dso, "["):
			sym = dso
		default:
			sym = "[" + path.Base(dso) + "]"
		}
	}
	if kernel {
		return sym + "_[k]"
	}
	return sym
}
