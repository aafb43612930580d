//go:build linux

package modbuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// A recipe is how a source tree builds its own module: the kbuild call of
// an automake file (lxin/quic's modules/Makefile.am,
//
//	$(MAKE) -C $(KERNEL_BUILD) W=1 M=$(CURDIR)/net/quic modules \
//		ROOTDIR=$(CURDIR) CONFIG_IP_QUIC=m CONFIG_IP_QUIC_TEST=m
//
// ), read so that --src can be the tree's top and the build is the tree's
// own at every commit.
type recipe struct {
	file   string   // the automake file, relative to Src ("modules/Makefile.am")
	dir    string   // $(CURDIR): the file's directory, relative to Src
	modRel string   // M=$(CURDIR)/modRel
	vars   []string // NAME=value, $(CURDIR) standing for dir
}

// curdir is what the recipe's values say for the automake file's directory.
const curdir = "$(CURDIR)"

var makeVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseRecipe finds the kbuild call in an automake (or make) file: the
// command that names M=$(CURDIR)/DIR and the modules goal, its
// continuation lines joined. Variables whose values refer to make
// variables other than $(CURDIR) are left out, as the tree's configure
// step would set them.
func parseRecipe(b []byte) (modRel string, vars []string, ok bool) {
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "\t") {
			continue // not a recipe line
		}
		f := strings.Fields(line)
		hasGoal := false
		var rel string
		var vs []string
		for _, w := range f {
			switch {
			case w == "modules":
				hasGoal = true
			case strings.HasPrefix(w, "M="+curdir+"/"):
				rel = path.Clean(strings.TrimPrefix(w, "M="+curdir+"/"))
			case strings.Contains(w, "="):
				name, value, _ := strings.Cut(w, "=")
				if !makeVarName.MatchString(name) || name == "M" || name == "C" {
					continue
				}
				if strings.Contains(strings.ReplaceAll(value, curdir, ""), "$") {
					continue
				}
				vs = append(vs, w)
			}
		}
		if hasGoal && rel != "" && rel != "." && !strings.HasPrefix(rel, "..") {
			return rel, vs, true
		}
	}
	return "", nil, false
}

// recipeFiles are where a tree keeps its module's build, relative to the
// directory given as --src: lxin/quic's top, or its modules directory.
var recipeFiles = []string{"modules/Makefile.am", "Makefile.am"}

// treeReader reads the files of Src: from the disk, or at a commit.
type treeReader func(ctx context.Context, rel string) ([]byte, error)

// diskReader reads below dir.
func diskReader(dir string) treeReader {
	return func(_ context.Context, rel string) ([]byte, error) {
		return os.ReadFile(filepath.Join(dir, rel))
	}
}

// gitReader reads below dir (which need not exist in the checkout) at ref.
func gitReader(dir, ref string) treeReader {
	return func(ctx context.Context, rel string) ([]byte, error) {
		top, sub, err := gitPlace(ctx, dir)
		if err != nil {
			return nil, err
		}
		p := filepath.ToSlash(filepath.Join(sub, rel))
		return exec.CommandContext(ctx, "git", "-C", top, "show", ref+":"+p).Output()
	}
}

// gitPlace returns the top of the git checkout dir lies in (dir, or the
// nearest directory above it that exists) and dir relative to it.
func gitPlace(ctx context.Context, dir string) (top, rel string, err error) {
	d := dir
	for {
		if _, err := os.Stat(d); err == nil {
			break
		}
		d = filepath.Dir(d)
	}
	out, err := exec.CommandContext(ctx, "git", "-C", d, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", "", fmt.Errorf("%s is not in a git checkout", dir)
	}
	top = strings.TrimSpace(string(out))
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	rel, err = filepath.Rel(top, dir)
	if err != nil || !within(dir, top) {
		return "", "", fmt.Errorf("%s is outside the git checkout %s", dir, top)
	}
	return top, rel, nil
}

// declaresModules reports whether the Kbuild or Makefile that read finds
// declares obj-m.
func declaresModules(ctx context.Context, read treeReader) bool {
	for _, name := range []string{"Kbuild", "Makefile"} {
		if b, err := read(ctx, name); err == nil && objM.Match(b) {
			return true
		}
	}
	return false
}

// findRecipe looks for the tree's own module build where Src is not itself
// a module's directory and no make variables were given.
func findRecipe(ctx context.Context, read treeReader) (*recipe, bool) {
	if declaresModules(ctx, read) {
		return nil, false
	}
	for _, f := range recipeFiles {
		b, err := read(ctx, f)
		if err != nil {
			continue
		}
		if rel, vars, ok := parseRecipe(b); ok {
			return &recipe{file: f, dir: path.Dir(f), modRel: rel, vars: vars}, true
		}
	}
	return nil, false
}

// applyRecipe turns o.Src, a tree's top with a recipe, into the module's
// directory and the recipe's make variables, saying so in the log. It does
// nothing where Src is a module's directory, make variables were given, or
// no recipe is found.
func applyRecipe(ctx context.Context, o *Options) error {
	if o.Src == "" || len(o.MakeVars) > 0 {
		return nil
	}
	src, err := filepath.Abs(o.Src)
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(src); err == nil {
		src = real
	}
	read := diskReader(src)
	if o.Ref != "" {
		read = gitReader(src, o.Ref)
	}
	r, ok := findRecipe(ctx, read)
	if !ok {
		return nil
	}
	base := filepath.Join(src, filepath.FromSlash(r.dir))
	var vars []string
	for _, v := range r.vars {
		vars = append(vars, strings.ReplaceAll(v, curdir, base))
	}
	o.Src = filepath.Join(base, filepath.FromSlash(r.modRel))
	o.MakeVars = vars
	fmt.Fprintf(o.Log, "%s: building %s as %s does: make M=%s %s\n", src, filepath.Join(r.dir, r.modRel), r.file, o.Src, strings.Join(vars, " "))
	return nil
}
