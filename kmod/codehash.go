//go:build linux

package kmod

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
)

// CodeHash names the code of an ELF object (a kernel module, a relocatable
// object) by what does not depend on where it was built: the SHA-256 of
// every section the kernel loads (SHF_ALLOC with contents in the file: code,
// read-only and writable data, the module's struct module, .modinfo,
// __versions, the alternatives and bug tables), in file order, each with its
// name, type, flags and size, and of the relocations against those
// sections, each by offset, type, addend and the symbol it names (by name,
// and for a defined symbol by section and value). It leaves out the GNU
// build ID and the other notes, the debug information and the symbol and
// string tables: those hold the build's directory (DW_AT_comp_dir, the
// paths of the sources), so a build ID and a file's SHA-256 differ between
// two builds of the same source in two folders, where CodeHash is the same.
// It returns 32 hex digits (128 bits of the SHA-256).
func CodeHash(img []byte) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return "", fmt.Errorf("not an ELF object: %w", err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil && err != elf.ErrNoSymbols {
		return "", fmt.Errorf("read ELF symbol table: %w", err)
	}
	loaded := func(s *elf.Section) bool {
		return s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS && s.Type != elf.SHT_NOTE && s.Type != elf.SHT_NULL
	}
	// The relocation sections of each loaded section, by its index.
	relocs := map[int][]*elf.Section{}
	for _, s := range f.Sections {
		if (s.Type == elf.SHT_RELA || s.Type == elf.SHT_REL) && int(s.Info) < len(f.Sections) && loaded(f.Sections[s.Info]) {
			relocs[int(s.Info)] = append(relocs[int(s.Info)], s)
		}
	}
	h := sha256.New()
	n := 0
	for i, s := range f.Sections {
		if !loaded(s) {
			continue
		}
		data, err := s.Data()
		if err != nil {
			return "", fmt.Errorf("read ELF section %s: %w", s.Name, err)
		}
		fmt.Fprintf(h, "section %q %v %#x %d\n", s.Name, s.Type, uint64(s.Flags), len(data))
		h.Write(data)
		n++
		for _, r := range relocs[i] {
			if err := hashRelocs(h, f, r, syms); err != nil {
				return "", fmt.Errorf("ELF section %s: %w", r.Name, err)
			}
		}
	}
	if n == 0 {
		return "", fmt.Errorf("ELF object has no loadable sections to name its code by")
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// ModuleCodeHash is CodeHash of a module file (.ko, .ko.xz, .ko.gz).
func ModuleCodeHash(path string) (string, error) {
	img, err := ReadModuleFile(path)
	if err != nil {
		return "", err
	}
	id, err := CodeHash(img)
	if err != nil {
		return "", fmt.Errorf("kernel module %s: %w", path, err)
	}
	return id, nil
}

// hashRelocs writes the relocations of section r, each with the symbol it
// refers to named independently of symbol table order.
func hashRelocs(h hash.Hash, f *elf.File, r *elf.Section, syms []elf.Symbol) error {
	data, err := r.Data()
	if err != nil {
		return fmt.Errorf("read relocations: %w", err)
	}
	rd := bytes.NewReader(data)
	for {
		var off, info uint64
		var addend int64
		switch {
		case f.Class == elf.ELFCLASS64 && r.Type == elf.SHT_RELA:
			var e elf.Rela64
			err = binary.Read(rd, f.ByteOrder, &e)
			off, info, addend = e.Off, e.Info, e.Addend
			info = uint64(elf.R_SYM64(info))<<32 | uint64(elf.R_TYPE64(info))
		case f.Class == elf.ELFCLASS64:
			var e elf.Rel64
			err = binary.Read(rd, f.ByteOrder, &e)
			off, info = e.Off, uint64(elf.R_SYM64(e.Info))<<32|uint64(elf.R_TYPE64(e.Info))
		case r.Type == elf.SHT_RELA:
			var e elf.Rela32
			err = binary.Read(rd, f.ByteOrder, &e)
			off, info, addend = uint64(e.Off), uint64(elf.R_SYM32(e.Info))<<32|uint64(elf.R_TYPE32(e.Info)), int64(e.Addend)
		default:
			var e elf.Rel32
			err = binary.Read(rd, f.ByteOrder, &e)
			off, info = uint64(e.Off), uint64(elf.R_SYM32(e.Info))<<32|uint64(elf.R_TYPE32(e.Info))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("relocation entry at %d: %w", rd.Size()-int64(rd.Len()), err)
		}
		sym, typ := info>>32, uint32(info)
		fmt.Fprintf(h, "reloc %#x %d %d %s\n", off, typ, addend, symbolName(f, syms, sym))
	}
}

// symbolName names symbol i of the symbol table (1-based, as relocations
// count it) by what it is, not by its place in the table.
func symbolName(f *elf.File, syms []elf.Symbol, i uint64) string {
	if i == 0 {
		return "-"
	}
	if i > uint64(len(syms)) {
		return fmt.Sprintf("bad-symbol-%d", i)
	}
	s := syms[i-1]
	sec := "UND"
	switch {
	case s.Section == elf.SHN_ABS:
		sec = "ABS"
	case s.Section == elf.SHN_COMMON:
		sec = "COMMON"
	case s.Section != elf.SHN_UNDEF && int(s.Section) < len(f.Sections):
		sec = f.Sections[s.Section].Name
	}
	name := s.Name
	if elf.ST_TYPE(s.Info) == elf.STT_SECTION {
		name = "section"
	}
	return fmt.Sprintf("%s@%s+%#x", name, sec, s.Value)
}
