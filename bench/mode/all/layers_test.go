package all_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// layers are the generic layers every mode goes through, from here.
var layers = []string{
	"../../matrix", "../../results", "../../render", "../../report", "../../plot",
	"../../remote", "../../side", "../../ab", "../../bisect", "../..", "../../../cmd/kqbench",
}

// TestGenericLayersImportNoMode: the generic layers import no mode's
// folder (but this package, which imports every one); each looks its modes
// up in the registries the folders fill.
func TestGenericLayersImportNoMode(t *testing.T) {
	fset := token.NewFileSet()
	for _, dir := range layers {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ast, err := parser.ParseFile(fset, f, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range ast.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if strings.HasPrefix(p, "kquic.dev/bench/mode/") && p != "kquic.dev/bench/mode/all" {
					t.Errorf("%s imports %s: a generic layer names no mode", f, p)
				}
			}
		}
	}
}
