// Command testsummary reads `go test -json` on stdin, prints what go test
// prints without -v (each package's result line, and the output of the
// tests that failed), and ends with a count of the tests that ran against
// the QUIC module (those whose testenv.Require found it: they log
// testenv.QUICMarker) and of those among them that skipped; a skip that is
// a known module bug's verdict (testenv.KnownBugMarker: the bug reproduced
// on a build known to have it) is counted as that, not as a skip. It exits 1
// when a test or package failed, a build failed, or nothing was read.
//
// With -state FILE the counts are added to those of earlier runs kept in
// FILE (make test's two guest passes), and the last line counts them all.
// With -require-module, a run in which no test reached the module, or one
// of them skipped, fails too.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"kquic.dev/internal/testenv"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// counts is what is kept across runs in the state file.
type counts struct {
	Ran, Passed, Failed, Skipped int      // every test (subtests too)
	Module                       int      // tests that reached the module
	ModuleSkipped                []string // of those, the ones that skipped
	ModuleKnownBugs              []string // and those whose skip is a known bug's verdict

	// failures names this run's failed tests and packages, and the tests
	// a package never ended (its binary timed out or panicked under
	// them), each with its panic: printed again last, where a log cut to
	// its tail still shows them.
	failures []string
}

func main() {
	state := flag.String("state", "", "add the counts to those kept in this file, and keep the sum there")
	requireModule := flag.Bool("require-module", false, "fail unless tests ran against the module and none of them skipped")
	flag.Parse()
	c, failed, err := summarize(os.Stdin, os.Stdout)
	for _, f := range c.failures {
		fmt.Println("FAILED:", f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if *state != "" {
		var old counts
		if b, err := os.ReadFile(*state); err == nil {
			json.Unmarshal(b, &old)
		}
		c.Ran += old.Ran
		c.Passed += old.Passed
		c.Failed += old.Failed
		c.Skipped += old.Skipped
		c.Module += old.Module
		c.ModuleSkipped = append(old.ModuleSkipped, c.ModuleSkipped...)
		c.ModuleKnownBugs = append(old.ModuleKnownBugs, c.ModuleKnownBugs...)
		b, _ := json.Marshal(c)
		if err := os.WriteFile(*state, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(1)
		}
	}
	fmt.Println(line(c))
	if failed || *requireModule && (c.Module == 0 || len(c.ModuleSkipped) > 0) {
		os.Exit(1)
	}
}

func line(c counts) string {
	s := fmt.Sprintf("tests: %d ran, %d passed, %d failed, %d skipped; against the QUIC module: %d", c.Ran, c.Passed, c.Failed, c.Skipped, c.Module)
	switch {
	case c.Module == 0:
		s += " (no test reached the module)"
	case len(c.ModuleSkipped) == 0:
		s += ", none of them skipped"
	default:
		sort.Strings(c.ModuleSkipped)
		s += fmt.Sprintf(", %d of them skipped: %s", len(c.ModuleSkipped), strings.Join(c.ModuleSkipped, ", "))
	}
	if len(c.ModuleKnownBugs) > 0 {
		sort.Strings(c.ModuleKnownBugs)
		s += fmt.Sprintf("; %d known module bugs reproduced (expected failures): %s", len(c.ModuleKnownBugs), strings.Join(c.ModuleKnownBugs, ", "))
	}
	return s
}

// knownBug says whether a skipped test's output is a known module bug's
// verdict (testenv.ModuleBug).
func knownBug(out []string) bool {
	for _, l := range out {
		if strings.Contains(l, testenv.KnownBugMarker) {
			return true
		}
	}
	return false
}

// unended prints the output of pkg's tests that started and never ended
// (out holds it: a timeout's panic and the goroutines go there), removes
// them from out, and returns a line for each, with its panic.
func unended(w io.Writer, pkg string, out map[key][]string) []string {
	var tests []string
	for k := range out {
		if k.pkg == pkg {
			tests = append(tests, k.test)
		}
	}
	sort.Strings(tests)
	var lines []string
	for _, test := range tests {
		k := key{pkg, test}
		why := "did not end"
		for _, l := range out[k] {
			fmt.Fprint(w, l)
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "panic: ") && why == "did not end" {
				why = "did not end: " + t
			}
		}
		delete(out, k)
		lines = append(lines, pkg+"."+test+" "+why)
	}
	return lines
}

// packagesOf returns the packages that have tests in out.
func packagesOf(out map[key][]string) map[string]bool {
	pkgs := map[string]bool{}
	for k := range out {
		pkgs[k.pkg] = true
	}
	return pkgs
}

// key names a test of a package.
type key struct{ pkg, test string }

// summarize prints the non-verbose output and counts the tests.
func summarize(r io.Reader, w io.Writer) (c counts, failed bool, err error) {
	out := map[key][]string{} // a running test's output, printed if it fails
	module := map[key]bool{}
	n := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Action == "" {
			fmt.Fprintln(w, sc.Text()) // not an event (go's own messages): as it is
			continue
		}
		n++
		k := key{e.Package, e.Test}
		switch e.Action {
		case "build-output":
			fmt.Fprint(w, e.Output)
		case "build-fail":
			failed = true
		case "output":
			if e.Test == "" {
				// The package's lines: its result, and what the
				// binary printed outside the tests.
				if t := strings.TrimSpace(e.Output); t != "PASS" && t != "FAIL" && !strings.HasPrefix(t, "=== ") {
					fmt.Fprint(w, e.Output)
				}
				continue
			}
			if strings.Contains(e.Output, testenv.QUICMarker) {
				module[k] = true
			}
			out[k] = append(out[k], e.Output)
		case "pass", "fail", "skip":
			if e.Test == "" {
				if e.Action == "fail" {
					failed = true
					c.failures = append(c.failures, unended(w, e.Package, out)...)
					c.failures = append(c.failures, e.Package+" failed")
				}
				continue
			}
			c.Ran++
			switch e.Action {
			case "pass":
				c.Passed++
			case "fail":
				c.Failed++
				failed = true
				c.failures = append(c.failures, e.Package+"."+e.Test)
				for _, l := range out[k] {
					fmt.Fprint(w, l)
				}
			case "skip":
				c.Skipped++
			}
			if module[k] {
				c.Module++
				if e.Action == "skip" && knownBug(out[k]) {
					c.ModuleKnownBugs = append(c.ModuleKnownBugs, e.Package+"."+e.Test)
				} else if e.Action == "skip" {
					c.ModuleSkipped = append(c.ModuleSkipped, e.Package+"."+e.Test)
				}
			}
			delete(out, k)
		}
	}
	if err := sc.Err(); err != nil {
		return c, true, err
	}
	for pkg := range packagesOf(out) {
		// go test ended without the package's result (killed): its
		// running tests are failures too.
		c.failures = append(c.failures, unended(w, pkg, out)...)
		failed = true
	}
	if n == 0 {
		return c, true, fmt.Errorf("no go test -json events on stdin")
	}
	return c, failed, nil
}
