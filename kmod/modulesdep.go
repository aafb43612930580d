//go:build linux

package kmod

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Tree is a kernel's module tree (lib/modules/<release>), indexed from its
// modules.dep and modules.builtin.
type Tree struct {
	// Dir is the tree's root, the directory holding modules.dep.
	Dir string
	// paths maps a module name to its file, relative to Dir.
	paths map[string]string
	// deps maps a module name to the names it depends on.
	deps    map[string][]string
	builtin map[string]bool
}

// OpenTree indexes the module tree at dir. It needs dir/modules.dep, which
// `make modules_install` and depmod(8) write.
func OpenTree(dir string) (*Tree, error) {
	f, err := os.Open(filepath.Join(dir, "modules.dep"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("module tree %s has no modules.dep: run `depmod -b <prefix> <release>` (or `make modules_install`) to create it", dir)
		}
		return nil, fmt.Errorf("open module tree: %w", err)
	}
	defer f.Close()
	t := &Tree{Dir: dir, paths: map[string]string{}, deps: map[string][]string{}, builtin: map[string]bool{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		mod, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			return nil, fmt.Errorf("%s/modules.dep line %d: no colon: %q", dir, line, sc.Text())
		}
		name := ModuleName(mod)
		t.paths[name] = mod
		for _, d := range strings.Fields(rest) {
			t.deps[name] = append(t.deps[name], ModuleName(d))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s/modules.dep: %w", dir, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "modules.builtin")); err == nil {
		for _, l := range strings.Fields(string(b)) {
			t.builtin[ModuleName(l)] = true
		}
	}
	return t, nil
}

// Release is the kernel release the tree belongs to (its directory name).
func (t *Tree) Release() string { return filepath.Base(t.Dir) }

// Builtin reports whether the module is built into the kernel.
func (t *Tree) Builtin(name string) bool { return t.builtin[ModuleName(name)] }

// Path returns the absolute file of a module, or "" if the tree lacks it.
func (t *Tree) Path(name string) string {
	p, ok := t.paths[ModuleName(name)]
	if !ok {
		return ""
	}
	return filepath.Join(t.Dir, p)
}

// Has reports whether the tree can provide the module, as a file or built in.
func (t *Tree) Has(name string) bool { return t.Path(name) != "" || t.Builtin(name) }

// Resolve returns the files to load, in order, so that every named module is
// loaded after the modules it depends on. Built-in modules need no file and
// are left out; a name the tree does not know is an error.
func (t *Tree) Resolve(names ...string) ([]string, error) {
	var (
		order []string
		state = map[string]int{} // 1 visiting, 2 done
		visit func(name, from string) error
	)
	visit = func(name, from string) error {
		name = ModuleName(name)
		switch state[name] {
		case 2:
			return nil
		case 1:
			return fmt.Errorf("module %s: dependency cycle through %s in %s/modules.dep", name, from, t.Dir)
		}
		if t.builtin[name] {
			state[name] = 2
			return nil
		}
		rel, ok := t.paths[name]
		if !ok {
			if from != "" {
				return fmt.Errorf("module %s (needed by %s) is not in %s: the tree does not match the module's kernel", name, from, t.Dir)
			}
			return fmt.Errorf("module %s is not in %s (neither a file in modules.dep nor built in)", name, t.Dir)
		}
		state[name] = 1
		for _, d := range t.deps[name] {
			if err := visit(d, name); err != nil {
				return err
			}
		}
		state[name] = 2
		order = append(order, filepath.Join(t.Dir, rel))
		return nil
	}
	for _, n := range names {
		if err := visit(n, ""); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// ResolveFile returns the files to load for an out-of-tree module file: the
// modules named in its depends= field (from this tree), then the file itself.
// It fails when the module was built for another kernel release.
func (t *Tree) ResolveFile(path string) ([]string, error) {
	mi, err := ReadModinfo(path)
	if err != nil {
		return nil, err
	}
	if rel := mi.KernelRelease(); rel != "" && rel != t.Release() {
		return nil, fmt.Errorf("kernel module %s was built for kernel %s, not %s: rebuild it against the headers of %s", path, rel, t.Release(), t.Release())
	}
	order, err := t.Resolve(mi.Depends...)
	if err != nil {
		return nil, fmt.Errorf("kernel module %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return append(order, abs), nil
}
