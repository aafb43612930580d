//go:build linux

package modbuild

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SourcePrefix starts a module named by its source where a module file is
// taken (kqbench's --module, --b-module, --a-module, $KQUIC_MODULE):
// "src:DIR" builds the files of DIR, "src:DIR@REF" the commit REF of the
// git checkout DIR lies in.
const SourcePrefix = "src:"

// IsSource reports whether a module argument names a source
// ("src:DIR[@REF]") rather than a module file.
func IsSource(arg string) bool { return strings.HasPrefix(arg, SourcePrefix) }

// ParseSource splits "src:DIR[@REF]" into the directory (a leading ~/
// expanded) and the ref ("" for the directory's files). The ref follows
// the last @, unless the whole names an existing directory.
func ParseSource(arg string) (dir, ref string, err error) {
	if !IsSource(arg) {
		return "", "", fmt.Errorf("%q is not a source (src:DIR or src:DIR@REF)", arg)
	}
	s := strings.TrimPrefix(arg, SourcePrefix)
	dir = s
	if st, err := os.Stat(expandHome(s)); err != nil || !st.IsDir() {
		if i := strings.LastIndex(s, "@"); i >= 0 {
			dir, ref = s[:i], s[i+1:]
			if ref == "" {
				return "", "", fmt.Errorf("%q: no ref after the @ (src:DIR@REF)", arg)
			}
		}
	}
	if dir == "" {
		return "", "", fmt.Errorf("%q: no directory (src:DIR or src:DIR@REF)", arg)
	}
	return expandHome(dir), ref, nil
}

// expandHome expands a leading ~/ (the shell does not, inside src:~/...).
func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}

// BuildSource builds (or finds in the cache) the module(s) a "src:DIR[@REF]"
// argument names, with o's kernel and cache (o.Src and o.Ref are set from
// arg).
func BuildSource(ctx context.Context, arg string, o Options) (*Result, error) {
	dir, ref, err := ParseSource(arg)
	if err != nil {
		return nil, err
	}
	o.Src, o.Ref = dir, ref
	r, err := Build(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", arg, err)
	}
	return r, nil
}

// ResolveModule returns the module file an argument names: a file as it is
// (it must exist), or for "src:DIR[@REF]" the module its build lists first
// (kbuild's modules.order: the tree's main module, quic.ko of lxin/quic,
// not its sample or test modules), built first if the cache does not have
// it.
func ResolveModule(ctx context.Context, arg string, o Options) (string, error) {
	if !IsSource(arg) {
		if _, err := os.Stat(arg); err != nil {
			return "", fmt.Errorf("module %w (a .ko file, or src:DIR[@REF] to build one)", err)
		}
		return arg, nil
	}
	r, err := BuildSource(ctx, arg, o)
	if err != nil {
		return "", err
	}
	if len(r.Modules) == 0 {
		return "", errors.New(arg + ": the build has no module")
	}
	return r.Modules[0], nil
}
