//go:build linux

package platformapi

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"kquic.dev/internal/testenv"
)

// The packages that build everywhere, and the platforms other than Linux
// they are built for (the Makefile's vet target builds the same).
var (
	packages  = []string{"kquic", "handshake", "ktls"}
	platforms = []string{"darwin", "windows", "freebsd"}
)

// TestStubsHaveTheLinuxAPI: on each other platform every package has exactly
// the exported API it has on Linux - the same constants (and values),
// variables, functions, types, struct fields and method sets - so code
// written against the Linux API builds anywhere; and every exported
// declaration in a file for other platforms has a doc comment.
func TestStubsHaveTheLinuxAPI(t *testing.T) {
	// It compiles for four systems: the answer does not depend on the
	// kernel, and under emulation it takes minutes.
	testenv.HostOnly(t, "it type-checks source; the guest adds nothing but time")
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to find export data:", err)
	}
	imp := newImporter()
	for _, pkg := range packages {
		dir := filepath.Join("..", "..", pkg)
		want := exportedAPI(t, imp, dir, "linux")
		for _, goos := range platforms {
			got := exportedAPI(t, imp, dir, goos)
			for _, name := range union(want, got) {
				switch w, g := want[name], got[name]; {
				case g == "":
					t.Errorf("%s for %s lacks %s: %s", pkg, goos, name, w)
				case w == "":
					t.Errorf("%s for %s has %s, which Linux lacks: %s", pkg, goos, name, g)
				case w != g:
					t.Errorf("%s for %s: %s differs\n\tlinux: %s\n\t%s: %s", pkg, goos, name, w, goos, g)
				}
			}
		}
		checkDocs(t, dir)
	}
}

// exportedAPI type-checks the package in dir as built for goos and describes
// each exported identifier, method and field.
func exportedAPI(t *testing.T, imp types.Importer, dir, goos string) map[string]string {
	t.Helper()
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = goos, "amd64", false
	bp, err := ctx.ImportDir(dir, 0)
	if err != nil {
		t.Fatalf("%s for %s: %v", dir, goos, err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: imp, GoVersion: "go1.26"}
	pkg, err := conf.Check("kquic.dev/"+filepath.Base(dir), fset, files, nil)
	if err != nil {
		t.Fatalf("%s for %s does not type-check: %v", dir, goos, err)
	}
	// Internal packages are the same types on Linux as the stubs' own: a
	// kquic.StreamState that is quicabi.StreamState on Linux is
	// kquic.StreamState elsewhere.
	qual := func(p *types.Package) string {
		if p == pkg || strings.HasPrefix(p.Path(), "kquic.dev/internal/") {
			return ""
		}
		return p.Path()
	}
	api := map[string]string{}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Const:
			api[name] = fmt.Sprintf("const %s = %s", types.TypeString(obj.Type(), qual), obj.Val().ExactString())
		case *types.Var:
			api[name] = "var " + types.TypeString(obj.Type(), qual)
		case *types.Func:
			api[name] = types.TypeString(obj.Type(), qual)
		case *types.TypeName:
			typ := types.Unalias(obj.Type())
			if st, ok := typ.Underlying().(*types.Struct); ok {
				api[name] = "struct"
				for i := range st.NumFields() {
					if f := st.Field(i); f.Exported() {
						api[name+"."+f.Name()] = fmt.Sprintf("field %s embedded=%v", types.TypeString(f.Type(), qual), f.Embedded())
					}
				}
			} else {
				api[name] = "type " + types.TypeString(typ.Underlying(), qual)
			}
			for _, recv := range []types.Type{typ, types.NewPointer(typ)} {
				ms := types.NewMethodSet(recv)
				for i := range ms.Len() {
					if m := ms.At(i).Obj(); m.Exported() {
						api[types.TypeString(recv, qual)+"."+m.Name()] = types.TypeString(m.Type(), qual)
					}
				}
			}
		}
	}
	return api
}

// checkDocs reports exported declarations without a doc comment in the
// package's files for other platforms.
func checkDocs(t *testing.T, dir string) {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*_other.go"))
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && d.Doc == nil {
					t.Errorf("%s: %s has no doc comment", fset.Position(d.Pos()), d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					var ids []*ast.Ident
					var doc *ast.CommentGroup
					switch s := s.(type) {
					case *ast.ValueSpec:
						ids, doc = s.Names, s.Doc
					case *ast.TypeSpec:
						ids, doc = []*ast.Ident{s.Name}, s.Doc
					}
					for _, id := range ids {
						if id.IsExported() && doc == nil && d.Doc == nil {
							t.Errorf("%s: %s has no doc comment", fset.Position(id.Pos()), id.Name)
						}
					}
				}
			}
		}
	}
}

func union(a, b map[string]string) []string {
	var names []string
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// newImporter reads the export data the go command builds (for this
// platform: the stubs' imports are the same packages).
func newImporter() types.Importer {
	var mu sync.Mutex
	paths := map[string]string{}
	lookup := func(path string) (io.ReadCloser, error) {
		mu.Lock()
		file, ok := paths[path]
		mu.Unlock()
		if !ok {
			out, err := exec.Command("go", "list", "-export", "-f", "{{.Export}}", path).Output()
			if err != nil {
				return nil, fmt.Errorf("go list -export %s: %v", path, err)
			}
			file = strings.TrimSpace(string(out))
			mu.Lock()
			paths[path] = file
			mu.Unlock()
		}
		return os.Open(file)
	}
	return importer.ForCompiler(token.NewFileSet(), "gc", lookup)
}
