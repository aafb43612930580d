//go:build linux

package kcov

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"kquic.dev/kmod"
)

// startKernel is x86-64's __START_KERNEL, the address the kernel's _text is
// linked at (__START_KERNEL_map plus the default CONFIG_PHYSICAL_START):
// KASLR moves _text by the offset KCOV takes away.
const startKernel = 0xffffffff81000000

// ModuleLayout reads where the running kernel placed a loaded module's
// sections (/sys/module/NAME/sections), the range of its functions and the
// kernel's KASLR offset (/proc/kallsyms), and its build ID. It needs root
// (the kernel shows addresses as zero to others).
func ModuleLayout(name string) (*Layout, error) {
	name = kmod.ModuleName(name)
	m, err := kmod.Loaded(name)
	if err != nil {
		return nil, fmt.Errorf("kcov: %w", err)
	}
	l := &Layout{Module: name, BuildID: m.BuildID, Sections: map[string]uint64{}}
	dir := filepath.Join("/sys/module", name, "sections")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("kcov: the sections of module %s: %w (a kernel with CONFIG_KALLSYMS lists them)", name, err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		a, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x"), 16, 64)
		if err != nil {
			continue
		}
		if a == 0 {
			return nil, fmt.Errorf("kcov: %s reads as 0: the kernel hides addresses (run as root)", filepath.Join(dir, e.Name()))
		}
		l.Sections[e.Name()] = a
	}
	if _, ok := l.Sections[".text"]; !ok {
		return nil, fmt.Errorf("kcov: module %s has no .text in %s", name, dir)
	}
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return nil, fmt.Errorf("kcov: %w", err)
	}
	defer f.Close()
	var text uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 3 {
			continue
		}
		a, err := strconv.ParseUint(fs[0], 16, 64)
		if err != nil {
			continue
		}
		switch {
		case len(fs) == 3 && fs[2] == "_text":
			text = a
		case len(fs) == 4 && fs[3] == "["+name+"]" && (fs[1] == "t" || fs[1] == "T"):
			if l.TextLow == 0 || a < l.TextLow {
				l.TextLow = a
			}
			l.TextHigh = max(l.TextHigh, a)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("kcov: /proc/kallsyms: %w", err)
	}
	if text == 0 {
		return nil, fmt.Errorf("kcov: no address for _text in /proc/kallsyms (run as root, kernel.kptr_restrict below 2)")
	}
	if l.TextLow == 0 {
		return nil, fmt.Errorf("kcov: /proc/kallsyms has no function of module %s", name)
	}
	l.KASLROffset = text - startKernel
	return l, nil
}
