//go:build linux

package browser_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kquic.dev/internal/browser"
	"kquic.dev/internal/testenv"
)

func chromium(t *testing.T) string {
	t.Helper()
	testenv.HostOnly(t, "a browser under emulation takes minutes; the page does not depend on the kernel")
	return testenv.Tool(t, "chromium", "chromium")
}

func page(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(p, []byte("<!DOCTYPE html><html><head><meta charset=utf-8><title>t</title></head><body>"+body+"</body></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	return "file://" + p
}

// TestLoad: a clean page gives no error and the expression's value; each
// way of breaking a page is reported.
func TestLoad(t *testing.T) {
	bin := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := browser.Load(ctx, bin, page(t, `<p id=x>hello</p>`), `document.getElementById("x").textContent`)
	if err != nil {
		t.Fatal(err)
	}
	var v string
	if err := json.Unmarshal(r.Value, &v); err != nil || v != "hello" || len(r.Errors) != 0 {
		t.Fatalf("clean page: value %s (%v), errors %q", r.Value, err, r.Errors)
	}
	for name, tc := range map[string]struct{ body, want string }{
		"console error":     {`<script>console.error("boom", 42)</script>`, "console.error: boom 42"},
		"exception":         {`<script>null.x</script>`, "exception: Uncaught"},
		"exception at load": {`<script>addEventListener("load", () => { throw new Error("late") })</script>`, "late"},
		"external resource": {`<link rel=stylesheet href="http://example.invalid/style.css">`, "example.invalid"},
		"missing file":      {`<img src="no-such-file.png">`, "no-such-file.png"},
	} {
		r, err := browser.Load(ctx, bin, page(t, tc.body), "")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		t.Logf("%s: %q", name, r.Errors)
		if !strings.Contains(strings.Join(r.Errors, "\n"), tc.want) {
			t.Errorf("%s: errors %q, want one with %q", name, r.Errors, tc.want)
		}
	}
}

// TestLoadWidth: the page is laid out in a viewport of the width asked for.
func TestLoadWidth(t *testing.T) {
	bin := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, w := range []int{0, 1400} {
		r, err := browser.LoadWith(ctx, bin, page(t, `<p>x</p>`), `window.innerWidth`, browser.Options{Width: w, Height: 900})
		if err != nil {
			t.Fatal(err)
		}
		var got int
		json.Unmarshal(r.Value, &got)
		want := w
		if w == 0 {
			want = 800
		}
		if got != want {
			t.Errorf("width %d: window.innerWidth %d, want %d", w, got, want)
		}
	}
}
