package flame

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Folded is a profile in folded form: samples per stack, the stack's frames
// from the root to the leaf joined by ';'.
type Folded map[string]int64

// Add counts n samples for the stack of frames (root first). Frames are
// cleaned so that the folded form stays parseable: ';' becomes ':', line
// breaks become spaces, and an empty frame is "[unknown]".
func (f Folded) Add(frames []string, n int64) {
	if len(frames) == 0 || n == 0 {
		return
	}
	clean := make([]string, len(frames))
	for i, fr := range frames {
		clean[i] = cleanFrame(fr)
	}
	f[strings.Join(clean, ";")] += n
}

var frameCleaner = strings.NewReplacer(";", ":", "\n", " ", "\r", " ")

func cleanFrame(s string) string {
	s = strings.TrimSpace(frameCleaner.Replace(s))
	if s == "" {
		return "[unknown]"
	}
	return s
}

// Total is the number of samples in the profile.
func (f Folded) Total() int64 {
	var t int64
	for _, n := range f {
		t += n
	}
	return t
}

// Merge adds every stack of o to f.
func (f Folded) Merge(o Folded) {
	for s, n := range o {
		f[s] += n
	}
}

// Stacks returns the stacks in sorted order.
func (f Folded) Stacks() []string {
	out := make([]string, 0, len(f))
	for s := range f {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// WriteTo writes the profile in folded form, one stack a line, sorted.
func (f Folded) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	var total int64
	for _, s := range f.Stacks() {
		n, err := fmt.Fprintf(bw, "%s %d\n", s, f[s])
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, bw.Flush()
}

// ReadFolded reads a profile in folded form. Blank lines and lines starting
// with '#' are skipped; a stack given twice is counted twice. A line whose
// last field is not a count is an error naming the line.
func ReadFolded(r io.Reader) (Folded, error) {
	f := Folded{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimRight(sc.Text(), " \t\r")
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		sp := strings.LastIndexAny(t, " \t")
		if sp <= 0 {
			return nil, fmt.Errorf("folded stacks, line %d: want \"frame;frame;... count\", got %q", line, t)
		}
		n, err := strconv.ParseInt(t[sp+1:], 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("folded stacks, line %d: %q is not a sample count", line, t[sp+1:])
		}
		stack := strings.TrimRight(t[:sp], " \t")
		if stack == "" {
			return nil, fmt.Errorf("folded stacks, line %d: no frames", line)
		}
		f[stack] += n
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("folded stacks: %w", err)
	}
	return f, nil
}

// ReadFoldedFile reads a folded profile from a file.
func ReadFoldedFile(path string) (Folded, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f, err := ReadFolded(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// WriteFile writes the profile to path in folded form.
func (f Folded) WriteFile(path string) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.WriteTo(fh); err != nil {
		fh.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return fh.Close()
}
