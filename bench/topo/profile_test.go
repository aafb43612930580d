package topo

import (
	"strings"
	"testing"
	"time"
)

func TestParseNetem(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Netem
	}{
		{"", Netem{}},
		{"none", Netem{}},
		{"mobile", Netem{Name: "mobile", Delay: 50 * time.Millisecond, Loss: 1, Reorder: 0.5}},
		{"lossy-5", Netem{Name: "lossy-5", Loss: 5}},
		{"delay=20ms,loss=0.5%,rate=100mbit", Netem{Name: "delay=20ms,loss=0.5%,rate=100mbit", Delay: 20 * time.Millisecond, Loss: 0.5, Rate: 100e6}},
		{"delay=10ms, jitter=2ms, reorder=1, rate=1.5gbit", Netem{Name: "delay=10ms, jitter=2ms, reorder=1, rate=1.5gbit", Delay: 10 * time.Millisecond, Jitter: 2 * time.Millisecond, Reorder: 1, Rate: 1.5e9}},
	} {
		got, err := ParseNetem(c.in)
		if err != nil {
			t.Errorf("ParseNetem(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("ParseNetem(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestParseNetemErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"mobil", "not a profile (lan, lossy-5, mobile)"},
		{"delay=10", "delay=10: want a duration"},
		{"loss=150%", "loss=150%: must be 0..100%"},
		{"loss=x", "loss=x: want a percentage"},
		{"rate=fast", "rate=fast: want a positive rate"},
		{"delay=1ms,delay=2ms", "delay given twice"},
		{"bandwidth=1mbit", "bandwidth=1mbit: unknown key"},
		{"reorder=1%", "reorder needs a delay"},
		{"delay=1ms,jitter=5ms", "jitter 5ms is larger than the delay 1ms"},
		{"delay=", `"delay=": want key=value`},
	} {
		_, err := ParseNetem(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseNetem(%q) = %v, want an error containing %q", c.in, err, c.want)
		}
	}
}

func TestNetemStringRoundTrip(t *testing.T) {
	for _, name := range ProfileNames() {
		p := Profiles[name]
		got, err := ParseNetem(p.String())
		if err != nil {
			t.Fatalf("%s: ParseNetem(%q): %v", name, p.String(), err)
		}
		got.Name = p.Name
		if got != p {
			t.Errorf("%s: %q parses to %+v", name, p.String(), got)
		}
	}
}
