// Package jsonfile saves and loads the tools' results files: indented JSON
// with a trailing newline, errors that name the file.
package jsonfile

import (
	"encoding/json"
	"fmt"
	"os"
)

// Save writes v to path as indented JSON.
func Save(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("save the results: %w", err)
	}
	return nil
}

// Load reads path into v and checks that its "schema" field is schema.
func Load(path string, v any, schema string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if head.Schema != schema {
		return fmt.Errorf("%s is not a %s file (schema %q)", path, schema, head.Schema)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
