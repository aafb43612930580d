package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// goTool is the go command of the toolchain that built the test.
func goTool() string {
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return "go"
}

// ModuleDir returns the directory of module path (an import path of the
// project's build list, such as github.com/quic-go/quic-go) in the module
// cache, where its sources are: for a test that builds or compares with a
// dependency's own programs.
func ModuleDir(t testing.TB, path string) string {
	t.Helper()
	out, err := exec.Command(goTool(), "list", "-m", "-f", "{{.Dir}}", path).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, ee.Stderr)
		}
		t.Fatalf("go list -m %s: %v", path, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		t.Fatalf("go list -m %s: no directory (is the module downloaded? go mod download %s)", path, path)
	}
	return dir
}
