//go:build linux

package kmod

import (
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
	return m, nil
}
