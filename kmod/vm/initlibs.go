//go:build linux

package vm

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// libDirs are where the dynamic loader looks for libraries when neither the
// binary's run path nor $LD_LIBRARY_PATH names them (Debian's multiarch
// directories first).
var libDirs = []string{
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
	"/lib64", "/usr/lib64", "/lib", "/usr/lib",
	"/usr/local/lib",
}

// initLibs returns the host files that the init binary at path needs before
// the guest's root is the host's: its ELF interpreter and every shared
// library it needs, transitively, by the paths the loader will open. A
// static binary needs none. The initramfs carries them at the same paths,
// so a kqbench built with cgo (the default where a C compiler exists) boots
// as well as a static one.
func initLibs(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("vm: init %s: not an ELF executable: %w", path, err)
	}
	defer f.Close()
	interp := ""
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return nil, fmt.Errorf("vm: init %s: read its interpreter: %w", path, err)
			}
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	if interp == "" {
		return nil, nil
	}
	if _, err := os.Stat(interp); err != nil {
		return nil, fmt.Errorf("vm: init %s: its interpreter %s: %w", path, interp, err)
	}
	out := []string{interp}
	seen := map[string]bool{}
	var walk func(bin string, f *elf.File) error
	walk = func(bin string, f *elf.File) error {
		needed, err := f.ImportedLibraries()
		if err != nil {
			return fmt.Errorf("vm: init %s: read the libraries %s needs: %w", path, bin, err)
		}
		dirs := searchDirs(bin, f)
		for _, name := range needed {
			if seen[name] {
				continue
			}
			seen[name] = true
			lib, lf, err := findLib(name, dirs, f)
			if err != nil {
				return fmt.Errorf("vm: init %s: %s needs %s, which is in none of %s: install it, or use a static init (CGO_ENABLED=0 go build ./cmd/kqbench)", path, bin, name, strings.Join(dirs, ", "))
			}
			out = append(out, lib)
			err = walk(lib, lf)
			lf.Close()
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(path, f); err != nil {
		return nil, err
	}
	return out, nil
}

// searchDirs is the loader's order: DT_RPATH (when there is no DT_RUNPATH),
// $LD_LIBRARY_PATH, DT_RUNPATH, then the system directories.
func searchDirs(bin string, f *elf.File) []string {
	origin := filepath.Dir(bin)
	expand := func(list []string) []string {
		var out []string
		for _, l := range list {
			for _, d := range strings.Split(l, ":") {
				d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", origin), "$ORIGIN", origin)
				if d != "" {
					out = append(out, d)
				}
			}
		}
		return out
	}
	runpath, _ := f.DynString(elf.DT_RUNPATH)
	var dirs []string
	if len(runpath) == 0 {
		rpath, _ := f.DynString(elf.DT_RPATH)
		dirs = append(dirs, expand(rpath)...)
	}
	if env := os.Getenv("LD_LIBRARY_PATH"); env != "" {
		dirs = append(dirs, expand([]string{env})...)
	}
	dirs = append(dirs, expand(runpath)...)
	return append(dirs, libDirs...)
}

// findLib finds a library of the same class and machine as the binary that
// needs it.
func findLib(name string, dirs []string, need *elf.File) (string, *elf.File, error) {
	if strings.Contains(name, "/") {
		dirs, name = []string{filepath.Dir(name)}, filepath.Base(name)
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		lf, err := elf.Open(p)
		if err != nil {
			continue
		}
		if lf.Class != need.Class || lf.Machine != need.Machine {
			lf.Close()
			continue
		}
		return p, lf, nil
	}
	return "", nil, os.ErrNotExist
}
