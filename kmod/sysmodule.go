//go:build linux

package kmod

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LoadedModule describes a module the running kernel has loaded, from
// /sys/module/<name>.
type LoadedModule struct {
	Name string
	// Version and Srcversion come from the module's version and srcversion
	// files; either may be empty.
	Version, Srcversion string
	// State is the module's initstate ("live", "coming", "going"); empty for
	// modules built into the kernel.
	State string
	// BuildID is the module's GNU build ID (hex), from its notes: it names
	// one binary exactly, where Version and Srcversion may be empty.
	BuildID string
}

// Builtin reports whether the module is part of the kernel image.
func (m *LoadedModule) Builtin() bool { return m.State == "" }

// sysModuleDir is where the kernel lists modules; tests point it elsewhere.
var sysModuleDir = "/sys/module"

// Loaded reports on a loaded (or built-in) module. It returns an error
// wrapping os.ErrNotExist when the kernel has no such module.
func Loaded(name string) (*LoadedModule, error) {
	name = ModuleName(name)
	dir := filepath.Join(sysModuleDir, name)
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("kernel module %s is not loaded: %w", name, os.ErrNotExist)
		}
		return nil, fmt.Errorf("kernel module %s: %w", name, err)
	}
	read := func(f string) string {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		return strings.TrimSpace(string(b))
	}
	m := &LoadedModule{Name: name, Version: read("version"), Srcversion: read("srcversion"), State: read("initstate")}
	m.BuildID = buildID(filepath.Join(dir, "notes", ".note.gnu.build-id"))
	return m, nil
}

// buildID reads a GNU build ID ELF note: namesz, descsz and type (4 bytes
// each), the name "GNU\0", then descsz bytes of ID.
func buildID(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 16 {
		return ""
	}
	n := int(binary.LittleEndian.Uint32(b[4:8]))
	if 16+n > len(b) {
		return ""
	}
	return hex.EncodeToString(b[16 : 16+n])
}
