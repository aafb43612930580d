package matrix

import (
	"reflect"
	"strings"
	"testing"
)

// ForConns gives each connection a CPU pair as --affinity says: apart
// where the CPUs suffice, sharing one CPU per connection where they do
// not, the pairs given, and an error naming the way out where nothing
// fits.
func TestAffinityForConns(t *testing.T) {
	auto8 := AutoAffinity([]int{0, 1, 2, 3, 4, 5, 6, 7})
	auto4 := AutoAffinity([]int{0, 1, 2, 3})
	pairs := &Affinity{Client: 0, Server: 2, Pairs: []CPUPair{{0, 2}, {1, 3}}}
	one := &Affinity{Client: 1, Server: 0}
	for _, c := range []struct {
		a    *Affinity
		n    int
		want []CPUPair
		err  string
	}{
		{nil, 4, nil, ""},
		{auto4, 1, []CPUPair{{0, 1}}, ""},
		{auto8, 1, []CPUPair{{0, 1}}, ""},
		{auto8, 4, []CPUPair{{0, 4}, {1, 5}, {2, 6}, {3, 7}}, ""},
		{auto4, 2, []CPUPair{{0, 2}, {1, 3}}, ""},
		{auto4, 3, []CPUPair{{0, 0}, {1, 1}, {2, 2}}, ""},
		{auto4, 4, []CPUPair{{0, 0}, {1, 1}, {2, 2}, {3, 3}}, ""},
		{auto4, 8, nil, "--conns 8 with --affinity auto: 8 connections need 8 CPUs to pin"},
		{pairs, 2, []CPUPair{{0, 2}, {1, 3}}, ""},
		{pairs, 1, []CPUPair{{0, 2}}, ""},
		{pairs, 3, nil, "gives 2 CPU pairs"},
		{one, 3, []CPUPair{{1, 0}, {1, 0}, {1, 0}}, ""},
	} {
		got, err := c.a.ForConns(c.n)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v for %d: %v, want an error with %q", c.a, c.n, err, c.err)
			}
			if err != nil && !strings.Contains(err.Error(), "--affinity none") {
				t.Errorf("%v for %d: %v does not say how to run unpinned", c.a, c.n, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v for %d: %v, %v; want %v", c.a, c.n, got, err, c.want)
		}
	}
	if a := AutoAffinity([]int{3}); a != nil {
		t.Errorf("auto on one CPU: %v, want not pinned", a)
	}
	if s := pairs.String(); s != "client,server CPUs per connection 0,2 1,3" {
		t.Errorf("String: %q", s)
	}
	if s := one.String(); s != "client CPU 1, server CPU 0" {
		t.Errorf("String of one pair: %q", s)
	}
}
