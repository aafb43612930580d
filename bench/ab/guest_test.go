//go:build linux

package ab

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestServe(t *testing.T) {
	in := strings.NewReader("[\"a\",\"b\"]\n[\"fail\"]\nnot json\n")
	var out bytes.Buffer
	var got [][]string
	err := Serve(in, &out, func(args []string) error {
		got = append(got, args)
		if args[0] == "fail" {
			return errors.New("round failed")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || strings.Join(got[0], " ") != "a b" {
		t.Errorf("rounds run: %q", got)
	}
	want := `{"ok":true}
{"ok":false,"error":"round failed"}
{"ok":false,"error":"a round's line is not a JSON array of arguments: invalid character 'o' in literal null (expecting 'u')"}
`
	if out.String() != want {
		t.Errorf("replies:\n%s\nwant:\n%s", out.String(), want)
	}
}
