package jsonobj

import (
	"encoding/json"
	"testing"
)

type inner struct {
	Mode string `json:"mode,omitempty"`
	Size int    `json:"size"`
}

type outer struct {
	inner
	Key    string `json:"key"`
	Note   string `json:"note,omitempty"`
	hidden int
	Skip   int `json:"-"`
	Plain  int
}

// TestMarshalPlacesParts: a part goes after the field it names, at the end
// when that field is absent, and not at all when nil; the struct's own
// encoding is unchanged around it.
func TestMarshalPlacesParts(t *testing.T) {
	v := outer{inner: inner{Mode: "rr", Size: 2}, Key: "k", Plain: 1}
	for _, c := range []struct {
		parts []Part
		want  string
	}{
		{nil, `{"mode":"rr","size":2,"key":"k","Plain":1}`},
		{[]Part{{Key: "rr", Value: map[string]int{"n": 1}, After: "key"}}, `{"mode":"rr","size":2,"key":"k","rr":{"n":1},"Plain":1}`},
		{[]Part{{Key: "web", Value: []int{1}, After: "note"}}, `{"mode":"rr","size":2,"key":"k","Plain":1,"web":[1]}`},
		{[]Part{{Key: "x", Value: (*inner)(nil)}, {Key: "y", Value: nil}}, `{"mode":"rr","size":2,"key":"k","Plain":1}`},
		{[]Part{{Key: "a", Value: 1}, {Key: "b", Value: "<b>", After: "mode"}}, `{"mode":"rr","b":"\u003cb\u003e","size":2,"key":"k","Plain":1,"a":1}`},
	} {
		b, err := Marshal(v, c.parts...)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("Marshal with %v = %s, want %s", c.parts, b, c.want)
		}
	}
}

// TestUnmarshalReturnsTheOthers: the struct's fields (embedded ones, and
// keys in another case, as encoding/json matches them) decode into it; the
// rest come back in order.
func TestUnmarshalReturnsTheOthers(t *testing.T) {
	var v outer
	rest, err := Unmarshal([]byte(`{"web":{"a":1},"MODE":"h3","size":3,"key":"k","rr":[1,2],"plain":4,"Skip":9}`), &v)
	if err != nil {
		t.Fatal(err)
	}
	if v.Mode != "h3" || v.Size != 3 || v.Key != "k" || v.Plain != 4 || v.Skip != 0 {
		t.Errorf("decoded %+v", v)
	}
	if len(rest) != 3 || rest[0].Key != "web" || string(rest[0].Value) != `{"a":1}` || rest[1].Key != "rr" || string(rest[1].Value) != `[1,2]` || rest[2].Key != "Skip" {
		t.Errorf("the others: %+v", rest)
	}
	if _, err := Unmarshal([]byte(`[1]`), &v); err == nil {
		t.Error("an array decoded as an object")
	}
	if rest, err := Unmarshal([]byte(`null`), &v); err != nil || rest != nil {
		t.Errorf("null: %v, %v", rest, err)
	}
}

// TestRoundTrip: what Marshal writes, Unmarshal and Encode give back byte
// for byte.
func TestRoundTrip(t *testing.T) {
	v := outer{inner: inner{Size: 5}, Key: "z", Note: "n"}
	b, err := Marshal(v, Part{Key: "p", Value: json.RawMessage(`{"q":[1,{"r":null}]}`), After: "size"})
	if err != nil {
		t.Fatal(err)
	}
	var back outer
	rest, err := Unmarshal(b, &back)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Marshal(back, Part{Key: rest[0].Key, Value: rest[0].Value, After: "size"})
	if err != nil || string(again) != string(b) {
		t.Errorf("round trip: %s, want %s (%v)", again, b, err)
	}
}
