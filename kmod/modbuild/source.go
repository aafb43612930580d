//go:build linux

package modbuild

// The source tree: resolved from the options (a directory, a make
// variable's tree around it, a git commit), and copied or exported for a
// build.

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// source is a source tree resolved: what to copy (or export) and how to
// name it.
type source struct {
	src     string // Src, absolute
	top     string // the directory copied: Src or a make variable's directory containing it
	modRel  string // Src relative to top
	hash    string // "content:…" or "git-tree:…"
	gitTop  string // for a ref: the git checkout, and top relative to it
	gitPath string
	vars    []makeVar
}

type makeVar struct {
	name, value string
	rel         string // for a value naming a directory containing Src: its path relative to top ("." for top)
	inTree      bool
}

func parseVars(vars []string) ([]makeVar, error) {
	var out []makeVar
	for _, v := range vars {
		name, value, ok := strings.Cut(v, "=")
		if !ok || name == "" || strings.ContainsAny(name, " \t:#") {
			return nil, fmt.Errorf("make variable %q: want NAME=value", v)
		}
		out = append(out, makeVar{name: name, value: value})
	}
	return out, nil
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func resolveSource(ctx context.Context, o *Options) (*source, error) {
	if o.Src == "" {
		return nil, errors.New("no source: give the directory of the module's Kbuild")
	}
	src, err := filepath.Abs(o.Src)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(src); err == nil {
		src = real
	} else if o.Ref == "" {
		return nil, fmt.Errorf("source %s: %w", o.Src, err)
	}
	vars, err := parseVars(o.MakeVars)
	if err != nil {
		return nil, err
	}
	s := &source{src: src, top: src, vars: vars}
	// A make variable naming a directory above Src (the tree's top, for
	// its include directory) widens what is copied to it.
	for i, v := range vars {
		if !filepath.IsAbs(v.value) {
			continue
		}
		d := filepath.Clean(v.value)
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		if within(src, d) {
			vars[i].inTree = true
			if within(s.top, d) {
				s.top = d
			}
		}
	}
	for i, v := range vars {
		if v.inTree {
			d := filepath.Clean(v.value)
			if real, err := filepath.EvalSymlinks(d); err == nil {
				d = real
			}
			vars[i].rel, _ = filepath.Rel(s.top, d)
		}
	}
	s.modRel, _ = filepath.Rel(s.top, src)
	if o.Ref == "" {
		if _, err := checkModuleDir(src, src); err != nil {
			return nil, err
		}
		h, err := contentHash(s.top)
		if err != nil {
			return nil, err
		}
		s.hash = "content:" + h
		return s, nil
	}
	// A ref: the tree of that commit at top's place in the checkout.
	s.gitTop, s.gitPath, err = gitPlace(ctx, s.top)
	if err != nil {
		return nil, fmt.Errorf("--ref %s: %w", o.Ref, err)
	}
	spec := o.Ref + "^{commit}:" + filepath.ToSlash(s.gitPath)
	if s.gitPath == "." {
		spec = o.Ref + "^{tree}"
	}
	out, err := exec.CommandContext(ctx, "git", "-C", s.gitTop, "rev-parse", "--verify", "-q", spec).Output()
	if err != nil {
		return nil, fmt.Errorf("--ref %s: no such commit, or it has no %s, in %s", o.Ref, s.gitPath, s.gitTop)
	}
	s.hash = "git-tree:" + strings.TrimSpace(string(out))
	return s, nil
}

// export writes the source tree into dst: a copy of top, or for a ref the
// commit's tree at top's place.
func (s *source) export(ctx context.Context, ref, dst string) error {
	if ref == "" {
		return copySource(s.top, dst)
	}
	cmd := exec.CommandContext(ctx, "git", "-C", s.gitTop, "archive", "--format=tar", ref, "--", filepath.ToSlash(s.gitPath))
	if s.gitPath == "." {
		cmd = exec.CommandContext(ctx, "git", "-C", s.gitTop, "archive", "--format=tar", ref)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	terr := untar(pipe, dst, s.gitPath)
	io.Copy(io.Discard, pipe)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive %s: %w: %s", ref, err, strings.TrimSpace(stderr.String()))
	}
	return terr
}

// untar extracts the entries of a git archive below prefix into dst.
func untar(r io.Reader, dst, prefix string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.FromSlash(strings.TrimSuffix(h.Name, "/"))
		rel := name
		if prefix != "." {
			if !within(name, prefix) {
				continue
			}
			rel, _ = filepath.Rel(prefix, name)
		}
		if strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
			continue
		}
		p := filepath.Join(dst, rel)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeSymlink:
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Symlink(h.Linkname, p); err != nil {
				return err
			}
		case tar.TypeReg:
			os.MkdirAll(filepath.Dir(p), 0o755)
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, os.FileMode(h.Mode).Perm())
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}
