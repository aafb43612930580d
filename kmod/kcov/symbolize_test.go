//go:build linux

package kcov

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"kquic.dev/internal/testenv"
)

// The module's source for the test: a function the trace reaches, one it
// misses with a cold part in .text.unlikely, and a kernel-style header
// inlined from outside the module's directory.
var (
	testC = `#include "../include/ext.h"
int g;
int hit(int x)
{
	if (x)
		g = ext(x);
	else
		g = 1;
	return g;
}
__attribute__((cold, noinline)) int coldf(int x)
{
	if (x > 5)
		return 1;
	return 2;
}
int miss(int x)
{
	if (x > 10)
		return coldf(x);
	return 0;
}
`
	testH = `static inline int ext(int x)
{
	if (x > 3)
		return x * 2;
	return x;
}
`
)

// callSite is a call to __sanitizer_cov_trace_pc as objdump shows it.
type callSite struct {
	section string
	off     uint64 // of the call instruction, in its section
	fn      string
}

// objdumpCalls lists the object's calls to the coverage function, by
// section, with the function objdump puts them in.
func objdumpCalls(t *testing.T, objdump, obj string) []callSite {
	out, err := exec.Command(objdump, "-dr", obj).Output()
	if err != nil {
		t.Fatal(err)
	}
	secRe := regexp.MustCompile(`^Disassembly of section (\S+):`)
	fnRe := regexp.MustCompile(`^[0-9a-f]+ <([^>]+)>:`)
	callRe := regexp.MustCompile(`^\s*([0-9a-f]+):\s.*\bcall\b`)
	relRe := regexp.MustCompile(`R_X86_64_(PLT|PC)32\s+__sanitizer_cov_trace_pc`)
	var sites []callSite
	var sec, fn string
	var pending *callSite
	for _, l := range strings.Split(string(out), "\n") {
		if m := secRe.FindStringSubmatch(l); m != nil {
			sec = m[1]
			continue
		}
		if m := fnRe.FindStringSubmatch(l); m != nil {
			fn = m[1]
			continue
		}
		if m := callRe.FindStringSubmatch(l); m != nil {
			off, _ := strconv.ParseUint(m[1], 16, 64)
			pending = &callSite{sec, off, fn}
			continue
		}
		if pending != nil && relRe.MatchString(l) {
			sites = append(sites, *pending)
		}
		pending = nil
	}
	return sites
}

// addr2line returns file:line of an offset in a section.
func addr2line(t *testing.T, tool, obj, section string, off uint64) (string, int) {
	out, err := exec.Command(tool, "-e", obj, "-j", section, "0x"+strconv.FormatUint(off, 16)).Output()
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSpace(string(out))
	s, _, _ = strings.Cut(s, " ") // "file:line (discriminator n)"
	i := strings.LastIndexByte(s, ':')
	n, err := strconv.Atoi(s[i+1:])
	if err != nil {
		t.Fatalf("addr2line: %q", out)
	}
	return filepath.Clean(s[:i]), n
}

// Symbolize agrees with binutils: every call to the coverage function is a
// point, each reached point is counted for objdump's function and
// addr2line's line, sections are told apart though each starts at 0 in
// the file, and an address that is no point is counted as unmapped.
func TestSymbolizeAgainstBinutils(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	objdump := testenv.Tool(t, "objdump", "binutils")
	a2l := testenv.Tool(t, "addr2line", "binutils")
	ld := testenv.Tool(t, "ld", "binutils")
	readelf := testenv.Tool(t, "readelf", "binutils")
	dir := t.TempDir()
	for name, text := range map[string]string{"mod/m.c": testC, "include/ext.h": testH} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Compiled, then linked into one relocatable object with a build ID,
	// as the kernel's modpost makes a .ko.
	obj := filepath.Join(dir, "mod", "m.ko")
	if out, err := exec.Command(gcc, "-c", "-g", "-O2", "-fsanitize-coverage=trace-pc", "-o", obj+".o", filepath.Join(dir, "mod", "m.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	if out, err := exec.Command(ld, "-r", "--build-id=sha1", "-o", obj, obj+".o").CombinedOutput(); err != nil {
		t.Fatalf("ld: %v\n%s", err, out)
	}
	notes, err := exec.Command(readelf, "-n", obj).Output()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindSubmatch(notes)
	if m == nil {
		t.Fatalf("readelf -n: no build ID in\n%s", notes)
	}
	buildID := string(m[1])
	sites := objdumpCalls(t, objdump, obj)
	secs := map[string]bool{}
	for _, s := range sites {
		secs[s.section] = true
	}
	if !secs[".text"] || !secs[".text.unlikely"] || len(sites) < 6 {
		t.Fatalf("the test object's calls: %+v (want some in .text and .text.unlikely)", sites)
	}
	const kaslr = 0x2a00000
	layout := Layout{Module: "m", BuildID: buildID, KASLROffset: kaslr, Sections: map[string]uint64{
		".text": 0xffffffffc0a01000, ".text.unlikely": 0xffffffffc0a00000, ".data": 0xffffffffc0a08000}}
	tr := &Trace{Layout: layout, ThreadsTraced: 3, Threads: 4}
	ret := func(s callSite) uint64 { return layout.Sections[s.section] - kaslr + s.off + 5 }
	wantLines := map[string]map[int]bool{}
	hitPoints := 0
	for _, s := range sites {
		if s.fn == "hit" {
			// The entry block ran 5 times, the others fewer.
			tr.PCs = append(tr.PCs, ret(s))
			tr.Counts = append(tr.Counts, map[bool]uint64{true: 5, false: 2}[hitPoints == 0])
			hitPoints++
			f, l := addr2line(t, a2l, obj, s.section, s.off)
			if wantLines[f] == nil {
				wantLines[f] = map[int]bool{}
			}
			wantLines[f][l] = true
		}
	}
	tr.PCs = append(tr.PCs, layout.Sections[".text"]-kaslr+1) // no point
	tr.Counts = append(tr.Counts, 1)
	c, err := Symbolize(obj, tr)
	if err != nil {
		t.Fatal(err)
	}
	if c.Points != len(sites) || c.Reached != hitPoints || c.Unmapped != 1 {
		t.Fatalf("points %d reached %d unmapped %d; want %d, %d, 1", c.Points, c.Reached, c.Unmapped, len(sites), hitPoints)
	}
	perFn := map[string]int{}
	for _, s := range sites {
		perFn[strings.TrimSuffix(s.fn, ".cold")]++
	}
	for name, n := range perFn {
		f := c.Function(name)
		if f == nil || f.Points != n {
			t.Fatalf("function %s: %+v, want %d points (objdump)", name, f, n)
		}
		if want := map[bool]int{true: n}[name == "hit"]; f.Reached != want {
			t.Errorf("function %s reached %d points, want %d", name, f.Reached, want)
		}
	}
	if f := c.Function("hit"); f.Calls != 5 {
		t.Errorf("hit was called %d times, want 5 (its entry block's count)", f.Calls)
	}
	if c.FunctionsReached != 1 || c.FunctionsInstrumented != len(perFn) {
		t.Errorf("functions reached %d of %d, want 1 of %d", c.FunctionsReached, c.FunctionsInstrumented, len(perFn))
	}
	// Lines: the module's own file's reached lines are addr2line's; the
	// inlined header's are counted apart.
	own := filepath.Join(dir, "mod", "m.c")
	if len(c.Files) != 1 || c.Files[0].File != own {
		t.Fatalf("files %+v, want %s alone", c.Files, own)
	}
	got := map[int]bool{}
	for _, l := range c.Files[0].Reached {
		got[l] = true
	}
	for l := range wantLines[own] {
		if !got[l] {
			t.Errorf("line %d of m.c reached per addr2line, not per Symbolize (%v)", l, c.Files[0].Reached)
		}
	}
	if len(got) != len(wantLines[own]) {
		t.Errorf("reached lines of m.c %v, addr2line %v", c.Files[0].Reached, wantLines[own])
	}
	hdr := filepath.Join(dir, "include", "ext.h")
	if c.HeaderLinesReached != len(wantLines[hdr]) || c.HeaderLines < c.HeaderLinesReached || c.HeaderLinesReached == 0 {
		t.Errorf("header lines reached %d of %d, addr2line says %d reached", c.HeaderLinesReached, c.HeaderLines, len(wantLines[hdr]))
	}
	if c.LinesReached != len(got) || c.Lines != len(c.Files[0].Reached)+len(c.Files[0].Unreached) {
		t.Errorf("line totals %d of %d do not add up with %+v", c.LinesReached, c.Lines, c.Files[0])
	}

	// A file of another build is refused, by build ID.
	tr.Layout.BuildID = "00ff"
	if _, err := Symbolize(obj, tr); err == nil || !strings.Contains(err.Error(), buildID) {
		t.Fatalf("Symbolize with the build ID of another file: %v", err)
	}
}

// A module without KCOV's calls is named as such.
func TestSymbolizeNotInstrumented(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "m.c")
	os.WriteFile(src, []byte("int f(int x) { return x ? 1 : 2; }\n"), 0o644)
	obj := filepath.Join(dir, "m.ko")
	if out, err := exec.Command(gcc, "-c", "-g", "-O2", "-o", obj, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	_, err := Symbolize(obj, &Trace{Layout: Layout{Sections: map[string]uint64{".text": 0xffffffffc0000000}}})
	if err == nil || !strings.Contains(err.Error(), "KCOV_INSTRUMENT=y") {
		t.Fatalf("Symbolize of an uninstrumented module: %v", err)
	}
}
