package kcov

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// coverFunc is the function KCOV's instrumentation calls at every basic
// block it traces.
const coverFunc = "__sanitizer_cov_trace_pc"

// ErrNotInstrumented is returned for a module file without KCOV's calls.
var ErrNotInstrumented = errors.New("kcov: the module has no coverage points: build it with KCOV_INSTRUMENT=y against a CONFIG_KCOV kernel (scripts/kcov-kernel module)")

// Symbolize maps a trace to the functions and source lines of ko, the
// module file the guest loaded (an x86-64 .ko with DWARF: built with -g).
// It places ko's sections where the trace's layout says the kernel put
// them, relocates its DWARF there, and counts the coverage points reached.
func Symbolize(ko string, tr *Trace) (*Coverage, error) {
	b, f, err := openModule(ko, tr)
	if err != nil {
		return nil, err
	}
	// Each allocated section at its address in KCOV's space.
	base := map[elf.SectionIndex]uint64{}
	for i, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		if a, ok := tr.Layout.Sections[s.Name]; ok {
			base[elf.SectionIndex(i)] = a - tr.Layout.KASLROffset
		}
	}
	pf, err := placed(b, f, base)
	if err != nil {
		return nil, err
	}
	syms, err := pf.Symbols()
	if err != nil {
		return nil, fmt.Errorf("kcov: %s: symbols: %w", ko, err)
	}
	points, err := coverPoints(pf, syms, base)
	if err != nil {
		return nil, err
	}
	if len(points) == 0 {
		return nil, fmt.Errorf("%w (%s)", ErrNotInstrumented, ko)
	}
	d, err := pf.DWARF()
	if err != nil {
		return nil, fmt.Errorf("kcov: %s has no usable DWARF (build it with KCFLAGS=-g): %w", ko, err)
	}
	lt, own, err := lineTable(d)
	if err != nil {
		return nil, fmt.Errorf("kcov: %s: %w", ko, err)
	}
	c := &Coverage{Module: tr.Layout.Module, File: ko, Points: len(points), ThreadsTraced: tr.ThreadsTraced, Threads: tr.Threads, Overflows: tr.Overflows, Missed: tr.Missed}
	reached, count := c.reach(points, tr)
	c.attribute(points, reached, count, lt, own, functions(syms, base))
	return c, nil
}

// openModule reads ko, an x86-64 kernel module, checking that it is the
// build the trace's guest loaded (where the trace has its build ID).
func openModule(ko string, tr *Trace) ([]byte, *elf.File, error) {
	b, err := os.ReadFile(ko)
	if err != nil {
		return nil, nil, fmt.Errorf("kcov: %w", err)
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return nil, nil, fmt.Errorf("kcov: %s: %w", ko, err)
	}
	if f.Type != elf.ET_REL || f.Machine != elf.EM_X86_64 {
		return nil, nil, fmt.Errorf("kcov: %s is not an x86-64 kernel module (ELF %v, %v)", ko, f.Type, f.Machine)
	}
	if want := tr.Layout.BuildID; want != "" {
		if got := noteBuildID(f); got != "" && got != want {
			return nil, nil, fmt.Errorf("kcov: %s has build ID %s, the module the guest loaded %s: give the file it loaded", ko, got, want)
		}
	}
	return b, f, nil
}

// reach sets the coverage points the trace reached, and counts its PCs
// that are no point of the module (Unmapped): the points reached, and each
// one's count.
func (c *Coverage) reach(points []uint64, tr *Trace) (map[uint64]bool, map[uint64]uint64) {
	reached := map[uint64]bool{}
	count := map[uint64]uint64{}
	pointSet := map[uint64]bool{}
	for _, p := range points {
		pointSet[p] = true
	}
	for i, pc := range tr.PCs {
		if pointSet[pc] {
			reached[pc] = true
			if i < len(tr.Counts) {
				count[pc] = tr.Counts[i]
			}
		} else {
			c.Unmapped++
		}
	}
	c.Reached = len(reached)
	return reached, count
}

// attribute gives the points to their functions and source lines: each
// function's points, those reached and its calls (the count of its entry
// point), and each of the module's own files' lines reached and not (a
// header's lines counted apart).
func (c *Coverage) attribute(points []uint64, reached map[uint64]bool, count map[uint64]uint64, lt lineRows, own func(string) bool, funcs funcTable) {
	type fileLine struct {
		file string
		line int
	}
	lineHit := map[fileLine]bool{}
	byFunc := map[string]*Function{}
	var order []string
	entered := map[uint64]bool{} // functions (by start) whose entry is seen
	for _, p := range points {
		// p is a return address: the call is the instruction before.
		file, line, ok := lt.lookup(p - 1)
		if ok {
			k := fileLine{file, line}
			lineHit[k] = lineHit[k] || reached[p]
		}
		fr := funcs.at(p)
		name := fr.name
		if name == "" {
			name = "?"
		}
		fn := byFunc[name]
		if fn == nil {
			fn = &Function{Name: name, File: file, Line: line}
			byFunc[name] = fn
			order = append(order, name)
		}
		// The points come in address order: a function's first is its
		// entry block's (its cold part is not where it is entered).
		if fr.name != "" && !fr.cold && !entered[fr.lo] {
			entered[fr.lo] = true
			fn.Calls += count[p]
		}
		fn.Points++
		if reached[p] {
			fn.Reached++
		}
	}
	files := map[string]*FileLines{}
	for k, hit := range lineHit {
		if !own(k.file) {
			c.HeaderLines++
			if hit {
				c.HeaderLinesReached++
			}
			continue
		}
		c.Lines++
		fl := files[k.file]
		if fl == nil {
			fl = &FileLines{File: k.file}
			files[k.file] = fl
		}
		if hit {
			c.LinesReached++
			fl.Reached = append(fl.Reached, k.line)
		} else {
			fl.Unreached = append(fl.Unreached, k.line)
		}
	}
	for _, fl := range files {
		slices.Sort(fl.Reached)
		slices.Sort(fl.Unreached)
		c.Files = append(c.Files, *fl)
	}
	sort.Slice(c.Files, func(i, j int) bool { return c.Files[i].File < c.Files[j].File })
	sort.Strings(order)
	for _, n := range order {
		fn := byFunc[n]
		c.FunctionsInstrumented++
		if fn.Reached > 0 {
			c.FunctionsReached++
		}
		c.Functions = append(c.Functions, *fn)
	}
}

// placed returns the module file with its symbols moved by the bases of
// their sections, so that debug/elf's relocation of the DWARF (symbol plus
// addend) puts each section's code at its own address: in the file every
// section starts at 0.
func placed(b []byte, f *elf.File, base map[elf.SectionIndex]uint64) (*elf.File, error) {
	var symtab *elf.Section
	for _, s := range f.Sections {
		if s.Type == elf.SHT_SYMTAB {
			symtab = s
		}
	}
	if symtab == nil {
		return nil, errors.New("kcov: the module file has no symbol table")
	}
	const entSize = 24 // Elf64_Sym
	c := bytes.Clone(b)
	for off := symtab.Offset; off+entSize <= symtab.Offset+symtab.Size; off += entSize {
		e := c[off : off+entSize]
		shndx := elf.SectionIndex(binary.LittleEndian.Uint16(e[6:8]))
		if a, ok := base[shndx]; ok {
			binary.LittleEndian.PutUint64(e[8:16], binary.LittleEndian.Uint64(e[8:16])+a)
		}
	}
	return elf.NewFile(bytes.NewReader(c))
}

// coverPoints are the return addresses of the calls to coverFunc: a call is
// an e8 opcode and a 4-byte displacement relocated against it, so the
// return address is the relocation's offset plus 4.
func coverPoints(f *elf.File, syms []elf.Symbol, base map[elf.SectionIndex]uint64) ([]uint64, error) {
	var out []uint64
	for _, rs := range f.Sections {
		if rs.Type != elf.SHT_RELA {
			continue
		}
		target := elf.SectionIndex(rs.Info)
		a, ok := base[target]
		if !ok || int(target) >= len(f.Sections) || f.Sections[target].Flags&elf.SHF_EXECINSTR == 0 {
			continue
		}
		data, err := rs.Data()
		if err != nil {
			return nil, fmt.Errorf("kcov: %s: %w", rs.Name, err)
		}
		for i := 0; i+24 <= len(data); i += 24 {
			off := binary.LittleEndian.Uint64(data[i:])
			info := binary.LittleEndian.Uint64(data[i+8:])
			sym, typ := info>>32, elf.R_X86_64(info&0xffffffff)
			if sym == 0 || int(sym) > len(syms) || syms[sym-1].Name != coverFunc {
				continue
			}
			if typ != elf.R_X86_64_PLT32 && typ != elf.R_X86_64_PC32 {
				continue
			}
			out = append(out, a+off+4)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// funcTable maps addresses to the function symbols that hold them.
type funcTable []funcRange

type funcRange struct {
	lo, hi uint64
	name   string
	cold   bool
}

func functions(syms []elf.Symbol, base map[elf.SectionIndex]uint64) funcTable {
	var t funcTable
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 {
			continue
		}
		if _, ok := base[s.Section]; !ok {
			continue
		}
		// A function's cold part (in .text.unlikely) counts as the
		// function.
		name, cold := strings.CutSuffix(s.Name, ".cold")
		t = append(t, funcRange{s.Value, s.Value + s.Size, name, cold})
	}
	sort.Slice(t, func(i, j int) bool { return t[i].lo < t[j].lo })
	return t
}

func (t funcTable) at(a uint64) funcRange {
	i := sort.Search(len(t), func(i int) bool { return t[i].lo > a }) - 1
	if i >= 0 && a < t[i].hi {
		return t[i]
	}
	return funcRange{}
}

// lineRows is a line table, sorted by address.
type lineRows []lineRow

type lineRow struct {
	addr uint64
	file string
	line int
	end  bool
}

// lineTable reads every compilation unit's line table, and returns with it
// a test for the module's own files: the units' files and the files in
// their directories.
func lineTable(d *dwarf.Data) (lineRows, func(string) bool, error) {
	var rows lineRows
	dirs := map[string]bool{}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, nil, err
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		if dir, _ := e.Val(dwarf.AttrCompDir).(string); name != "" && !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		if name != "" {
			dirs[filepath.Dir(filepath.Clean(name))] = true
		}
		lr, err := d.LineReader(e)
		if err != nil {
			return nil, nil, err
		}
		if lr != nil {
			var le dwarf.LineEntry
			for lr.Next(&le) == nil {
				row := lineRow{addr: le.Address, line: le.Line, end: le.EndSequence}
				if le.File != nil {
					row.file = filepath.Clean(le.File.Name)
				}
				rows = append(rows, row)
			}
		}
		r.SkipChildren()
	}
	// At one address a sequence's end sorts before the next one's start.
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].addr != rows[j].addr {
			return rows[i].addr < rows[j].addr
		}
		return rows[i].end && !rows[j].end
	})
	own := func(file string) bool { return dirs[filepath.Dir(file)] }
	return rows, own, nil
}

func (rows lineRows) lookup(a uint64) (string, int, bool) {
	i := sort.Search(len(rows), func(i int) bool { return rows[i].addr > a }) - 1
	if i < 0 || rows[i].end || rows[i].line == 0 {
		return "", 0, false
	}
	return rows[i].file, rows[i].line, true
}

// noteBuildID is the GNU build ID of an ELF file, in hex, or "".
func noteBuildID(f *elf.File) string {
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		return ""
	}
	b, err := s.Data()
	if err != nil || len(b) < 16 {
		return ""
	}
	namesz, descsz := binary.LittleEndian.Uint32(b[0:]), binary.LittleEndian.Uint32(b[4:])
	off := 12 + (namesz+3)&^3
	if uint64(off)+uint64(descsz) > uint64(len(b)) {
		return ""
	}
	return hex.EncodeToString(b[off : off+descsz])
}
