package jsonfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	type doc struct {
		Schema string `json:"schema"`
		N      int    `json:"n"`
	}
	p := filepath.Join(t.TempDir(), "d.json")
	if err := Save(p, doc{"x/v1", 3}); err != nil {
		t.Fatal(err)
	}
	var d doc
	if err := Load(p, &d, "x/v1"); err != nil || d.N != 3 {
		t.Fatalf("%+v %v", d, err)
	}
	if err := Load(p, &d, "y/v1"); err == nil || !strings.Contains(err.Error(), "not a y/v1 file") {
		t.Fatalf("another schema: %v", err)
	}
	os.WriteFile(p, []byte("{"), 0o644)
	if err := Load(p, &d, "x/v1"); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("broken JSON: %v", err)
	}
	if err := Save(filepath.Join(p, "under-a-file"), d); err == nil {
		t.Fatal("saved under a file")
	}
}
