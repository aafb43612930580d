package kquic_test

import (
	"io"
	"reflect"
	"testing"

	"kquic.dev/kquic"
)

// TestUniStreamTypes: the two ends of a unidirectional stream have only
// the methods of their direction, so a write on the peer's stream or a
// read of ours is a compile error rather than an error at run time.
func TestUniStreamTypes(t *testing.T) {
	var (
		_ io.Reader      = (*kquic.ReceiveStream)(nil)
		_ io.WriteCloser = (*kquic.SendStream)(nil)
	)
	for _, c := range []struct {
		typ  reflect.Type
		has  []string
		lack []string
	}{
		{reflect.TypeFor[*kquic.ReceiveStream](),
			[]string{"StreamID", "Read", "CancelRead", "SetReadDeadline"},
			[]string{"Write", "WriteAndClose", "Close", "CancelWrite", "SetWriteDeadline", "SetDeadline"}},
		{reflect.TypeFor[*kquic.SendStream](),
			[]string{"StreamID", "Write", "WriteAndClose", "Close", "CancelWrite", "SetWriteDeadline"},
			[]string{"Read", "CancelRead", "SetReadDeadline", "SetDeadline"}},
	} {
		for _, m := range c.has {
			if _, ok := c.typ.MethodByName(m); !ok {
				t.Errorf("%v has no %s", c.typ, m)
			}
		}
		for _, m := range c.lack {
			if _, ok := c.typ.MethodByName(m); ok {
				t.Errorf("%v has %s", c.typ, m)
			}
		}
	}
	// The Conn's methods give them.
	conn := reflect.TypeFor[*kquic.Conn]()
	for name, want := range map[string]reflect.Type{
		"AcceptUniStream":   reflect.TypeFor[*kquic.ReceiveStream](),
		"OpenUniStream":     reflect.TypeFor[*kquic.SendStream](),
		"OpenUniStreamSync": reflect.TypeFor[*kquic.SendStream](),
		"AcceptStream":      reflect.TypeFor[*kquic.Stream](),
		"OpenStream":        reflect.TypeFor[*kquic.Stream](),
	} {
		m, ok := conn.MethodByName(name)
		if !ok || m.Type.Out(0) != want {
			t.Errorf("Conn.%s: %v, want it to return %v", name, m.Type, want)
		}
	}
}
