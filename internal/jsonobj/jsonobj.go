// Package jsonobj encodes a struct with fields that are not its own: parts
// of a JSON object that registered types own (a benchmark mode's figures in
// a results file) are saved beside the struct's fields, each after the
// field it followed in files written before, and read back apart from
// them. A struct keeps its encoding whatever its parts.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// Field is one field of a JSON object.
type Field struct {
	Key   string
	Value json.RawMessage
}

// Part is a field that a struct does not hold itself: Value saved under
// Key, after the struct's field After ("", or a field the object does not
// have: at the end).
type Part struct {
	Key   string
	Value any
	After string
}

// Marshal encodes v, a struct, with the parts among its fields; a part
// whose value is nil is left out.
func Marshal(v any, parts ...Part) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var fs []Field
	for _, p := range parts {
		if isNil(p.Value) {
			continue
		}
		if fs == nil {
			if fs, err = Fields(b); err != nil {
				return nil, err
			}
		}
		pv, err := json.Marshal(p.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Key, err)
		}
		fs = insert(fs, Field{Key: p.Key, Value: pv}, p.After)
	}
	if fs == nil {
		return b, nil
	}
	return encode(fs), nil
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// Unmarshal decodes obj into v, a pointer to a struct, and returns the
// fields of obj that v's type does not know, in their order.
func Unmarshal(obj []byte, v any) ([]Field, error) {
	if err := json.Unmarshal(obj, v); err != nil {
		return nil, err
	}
	if bytes.Equal(bytes.TrimSpace(obj), []byte("null")) {
		return nil, nil
	}
	fs, err := Fields(obj)
	if err != nil {
		return nil, err
	}
	known := keyset(reflect.TypeOf(v).Elem())
	var out []Field
	for _, f := range fs {
		if !known[strings.ToLower(f.Key)] {
			out = append(out, f)
		}
	}
	return out, nil
}

// Fields splits a JSON object into its fields, in order.
func Fields(obj []byte) ([]Field, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if t != json.Delim('{') {
		return nil, fmt.Errorf("jsonobj: %v, not an object", t)
	}
	var out []Field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("jsonobj: field %q: %w", k, err)
		}
		out = append(out, Field{Key: k, Value: raw})
	}
	return out, nil
}

// insert adds f after the field named after ("", or a name fs does not
// have: at the end).
func insert(fs []Field, f Field, after string) []Field {
	for i := range fs {
		if after != "" && fs[i].Key == after {
			return append(fs[:i+1], append([]Field{f}, fs[i+1:]...)...)
		}
	}
	return append(fs, f)
}

// encode joins fields into a JSON object.
func encode(fs []Field) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(f.Value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

var keysets sync.Map // reflect.Type: map[string]bool

// keyset is the JSON keys, in lower case, that encoding/json decodes into
// the fields of struct type t (those of embedded structs included).
func keyset(t reflect.Type) map[string]bool {
	if k, ok := keysets.Load(t); ok {
		return k.(map[string]bool)
	}
	k := map[string]bool{}
	addKeys(t, k)
	keysets.Store(t, k)
	return k
}

func addKeys(t reflect.Type, k map[string]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			addKeys(ft, k)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		k[strings.ToLower(name)] = true
	}
}
