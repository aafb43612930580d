//go:build linux

package modbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// buildArtifact reports whether a file name is one kbuild writes into a
// module directory: such files are left out of a source's hash and of its
// copy, so a tree built in place hashes and builds as a clean one.
func buildArtifact(name string) bool {
	switch name {
	case "modules.order", "Module.symvers", "Module.markers", ".cache.mk":
		return true
	}
	if strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".cmd") || strings.HasPrefix(name, ".tmp") {
		return true
	}
	for _, ext := range []string{".o", ".ko", ".mod", ".mod.c", ".a", ".dwo", ".symversions", ".ko.xz", ".ko.gz", ".ko.zst"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// walkSource calls fn for every file of a source tree but its build
// artifacts and version-control directories, in a fixed order, with its
// path relative to root.
func walkSource(root string, fn func(rel string, d fs.DirEntry) error) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel != "." && (d.Name() == ".git" || d.Name() == ".hg" || d.Name() == ".svn") {
				return filepath.SkipDir
			}
			return nil
		}
		if buildArtifact(d.Name()) {
			return nil
		}
		return fn(rel, d)
	})
}

// contentHash is the SHA-256 of a source tree: every file's path, kind,
// executable bit and contents (a symbolic link's target), build artifacts
// left out.
func contentHash(root string) (string, error) {
	h := sha256.New()
	err := walkSource(root, func(rel string, d fs.DirEntry) error {
		p := filepath.Join(root, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "link %q %q\n", rel, t)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "file %q %v %d\n", rel, info.Mode()&0o111 != 0, info.Size())
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash source tree %s: %w", root, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// copySource copies a source tree to dst (which must not exist), build
// artifacts left out.
func copySource(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	return walkSource(src, func(rel string, d fs.DirEntry) error {
		from, to := filepath.Join(src, rel), filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(from)
			if err != nil {
				return err
			}
			return os.Symlink(t, to)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			in, err := os.Open(from)
			if err != nil {
				return err
			}
			defer in.Close()
			out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, in); err != nil {
				out.Close()
				return err
			}
			return out.Close()
		}
		return nil
	})
}

// objM matches a kbuild goal line: obj-m, or obj-$(CONFIG_...) which a
// make variable turns into obj-m.
var objM = regexp.MustCompile(`(?m)^\s*obj-(m|\$\([A-Za-z0-9_]+\)|\$\{[A-Za-z0-9_]+\})\s*[:+]?=`)

// ErrNotModuleSource is wrapped by the error for a directory that is not the
// directory of a module's Kbuild.
var ErrNotModuleSource = errors.New("not a module source")

// checkModuleDir returns the file of dir that declares the modules (Kbuild,
// else Makefile), or an error wrapping ErrNotModuleSource.
func checkModuleDir(dir, shown string) (string, error) {
	for _, name := range []string{"Kbuild", "Makefile"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil && objM.Match(b) {
			return name, nil
		}
	}
	var hint []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(hint) >= 3 {
			return filepath.SkipDir
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() && (d.Name() == "Kbuild" || d.Name() == "Makefile") && filepath.Dir(p) != dir {
			if b, err := os.ReadFile(p); err == nil && objM.Match(b) {
				rel, _ := filepath.Rel(dir, filepath.Dir(p))
				hint = append(hint, filepath.Join(shown, rel))
			}
		}
		return nil
	})
	msg := ""
	if len(hint) > 0 {
		sort.Strings(hint)
		msg = fmt.Sprintf(" (these have one: %s)", strings.Join(hint, ", "))
	}
	return "", fmt.Errorf("%w: no Kbuild or Makefile with obj-m under %s; give the directory of the module's Kbuild%s", ErrNotModuleSource, shown, msg)
}
