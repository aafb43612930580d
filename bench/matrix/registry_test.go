package matrix_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
)

// tiers is a test mode's own part of a spec.
type tiers struct {
	Levels []int `json:"levels"`
}

// The test mode "tiered": a cell per level and size, keyed by both, with
// its levels in its own part of the spec.
func init() {
	err := matrix.RegisterModeSpec("tiered", matrix.ModeSpec{
		About: "levels",
		Validate: func(s *matrix.Spec) []error {
			if t, ok := s.Settings.(*tiers); !ok || len(t.Levels) == 0 {
				return []error{fmt.Errorf("no levels")}
			}
			return nil
		},
		Cells: func(s *matrix.Spec) []matrix.Cell {
			var out []matrix.Cell
			for _, l := range s.Settings.(*tiers).Levels {
				for _, z := range s.Sizes {
					out = append(out, matrix.Cell{Mode: "tiered", Transport: "tcp", Size: z, Conns: l})
				}
			}
			return out
		},
		Key:      func(c matrix.Cell) string { return fmt.Sprintf("tiered/%d/%d", c.Conns, c.Size) },
		Settings: &matrix.SettingsType{Key: "tiers", New: func() any { return &tiers{} }},
	})
	if err != nil {
		panic(err)
	}
}

// TestModeRegistered: a registered mode's checks, cells and keys are the
// spec's, its settings are saved last under their key and read back into
// their type, and fields no type has are kept.
func TestModeRegistered(t *testing.T) {
	s := matrix.Spec{Mode: "tiered", Sizes: []int{1, 2}, Settings: &tiers{Levels: []int{3}}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	cs := s.Cells()
	if len(cs) != 2 || cs[1].Key() != "tiered/3/2" {
		t.Fatalf("cells %v", cs)
	}
	cs[0].Netem = "lan"
	if k := cs[0].Key(); k != "tiered/3/1/netem=lan" {
		t.Errorf("key with the common suffix: %q", k)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(b), `"tiers":{"levels":[3]}}`) {
		t.Errorf("saved %s", b)
	}
	var back matrix.Spec
	if err := json.Unmarshal(append(b[:len(b)-1], []byte(`,"later":1}`)...), &back); err != nil {
		t.Fatal(err)
	}
	if tr, ok := back.Settings.(*tiers); !ok || !slices.Equal(tr.Levels, []int{3}) {
		t.Errorf("settings read back as %#v", back.Settings)
	}
	again, _ := json.Marshal(back)
	if !strings.HasSuffix(string(again), `"tiers":{"levels":[3]},"later":1}`) {
		t.Errorf("saved again %s", again)
	}
	if err := (&matrix.Spec{Mode: "tiered", Settings: &tiers{}}).Validate(); err == nil {
		t.Error("no levels: valid")
	}
	if err := (&matrix.Spec{Mode: "nosuch"}).Validate(); err == nil || !strings.Contains(err.Error(), "tiered") {
		t.Errorf("an unknown mode: %v, want the modes listed", err)
	}
	if !slices.Contains(matrix.Modes(), "tiered") || matrix.Modes()[0] != matrix.DefaultMode() {
		t.Errorf("modes %v, default %q", matrix.Modes(), matrix.DefaultMode())
	}
	if _, err := json.Marshal(matrix.Spec{Settings: &tiers{}}); err == nil {
		t.Error("settings saved for the default mode, which has none")
	}
}
