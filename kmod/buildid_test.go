//go:build linux

package kmod

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// TestLoadedBuildID: a module's GNU build ID comes from its notes, as the
// kernel exposes them under /sys/module/<name>/notes.
func TestLoadedBuildID(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "quic", "notes")
	os.MkdirAll(notes, 0o755)
	id := []byte{0x0b, 0x7a, 0xe3, 0xea, 0x4e, 0x92}
	note := make([]byte, 16, 16+len(id))
	binary.LittleEndian.PutUint32(note[0:], 4)               // namesz
	binary.LittleEndian.PutUint32(note[4:], uint32(len(id))) // descsz
	binary.LittleEndian.PutUint32(note[8:], 3)               // NT_GNU_BUILD_ID
	copy(note[12:], "GNU\x00")
	os.WriteFile(filepath.Join(notes, ".note.gnu.build-id"), append(note, id...), 0o444)
	old := sysModuleDir
	sysModuleDir = dir
	defer func() { sysModuleDir = old }()
	m, err := Loaded("quic")
	if err != nil {
		t.Fatal(err)
	}
	if m.BuildID != "0b7ae3ea4e92" {
		t.Errorf("BuildID = %q, want 0b7ae3ea4e92", m.BuildID)
	}
	os.WriteFile(filepath.Join(notes, ".note.gnu.build-id"), note[:10], 0o644) // truncated
	if m, _ := Loaded("quic"); m.BuildID != "" {
		t.Errorf("truncated note: BuildID = %q", m.BuildID)
	}
}
