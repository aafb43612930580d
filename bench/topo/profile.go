package topo

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Netem is an impairment of the link between the two ends: what the
// kernel's netem qdisc adds to every packet. Delay and Jitter are the round
// trip's (SetNetem puts half on each end of the veth pair); Loss, Reorder
// and Rate apply to each direction.
type Netem struct {
	// Name is the profile's name ("mobile") or the custom spec as given.
	Name string `json:"name"`
	// Delay is the round-trip time the link adds, Jitter its variation.
	Delay  time.Duration `json:"delay"`
	Jitter time.Duration `json:"jitter,omitempty"`
	// Loss is the percentage of packets dropped in each direction.
	Loss float64 `json:"loss,omitempty"`
	// Reorder is the percentage of packets sent ahead of their turn (without
	// the delay) in each direction; it needs a Delay.
	Reorder float64 `json:"reorder,omitempty"`
	// Rate limits each direction, in bit/s (0: no limit).
	Rate uint64 `json:"rate,omitempty"`
}

// Profiles are the named impairments of --netem.
var Profiles = map[string]Netem{
	"lan":     {Name: "lan", Delay: 200 * time.Microsecond},
	"mobile":  {Name: "mobile", Delay: 50 * time.Millisecond, Loss: 1, Reorder: 0.5},
	"lossy-5": {Name: "lossy-5", Loss: 5},
}

// ProfileNames lists the named profiles, sorted.
func ProfileNames() []string {
	var n []string
	for k := range Profiles {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// IsZero reports whether n impairs nothing.
func (n Netem) IsZero() bool {
	return n.Delay == 0 && n.Jitter == 0 && n.Loss == 0 && n.Reorder == 0 && n.Rate == 0
}

// String describes the impairment in the syntax ParseNetem takes.
func (n Netem) String() string {
	var p []string
	if n.Delay > 0 {
		p = append(p, "delay="+n.Delay.String())
	}
	if n.Jitter > 0 {
		p = append(p, "jitter="+n.Jitter.String())
	}
	if n.Loss > 0 {
		p = append(p, "loss="+strconv.FormatFloat(n.Loss, 'g', -1, 64)+"%")
	}
	if n.Reorder > 0 {
		p = append(p, "reorder="+strconv.FormatFloat(n.Reorder, 'g', -1, 64)+"%")
	}
	if n.Rate > 0 {
		p = append(p, "rate="+rateName(n.Rate))
	}
	if len(p) == 0 {
		return "none"
	}
	return strings.Join(p, ",")
}

// Title names the impairment for a table title: the profile's name with
// what it means.
func (n Netem) Title() string {
	if n.Name == "" || n.Name == n.String() {
		return "netem " + n.String()
	}
	return "netem " + n.Name + " (" + n.String() + ")"
}

func rateName(r uint64) string {
	switch {
	case r%1_000_000_000 == 0:
		return fmt.Sprintf("%dgbit", r/1_000_000_000)
	case r%1_000_000 == 0:
		return fmt.Sprintf("%dmbit", r/1_000_000)
	case r%1000 == 0:
		return fmt.Sprintf("%dkbit", r/1000)
	}
	return fmt.Sprintf("%dbit", r)
}

// ParseNetem parses a --netem value: a profile's name (see Profiles), or a
// comma-separated list of delay=DURATION (the round trip), jitter=DURATION,
// loss=PERCENT, reorder=PERCENT and rate=RATE (bit/s, with kbit, mbit or
// gbit), e.g. "delay=20ms,loss=0.5%,rate=100mbit". "" and "none" are no
// impairment.
func ParseNetem(s string) (Netem, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return Netem{}, nil
	}
	if p, ok := Profiles[s]; ok {
		return p, nil
	}
	if !strings.Contains(s, "=") {
		return Netem{}, fmt.Errorf("netem %q: not a profile (%s) nor a list of delay=,jitter=,loss=,reorder=,rate=", s, strings.Join(ProfileNames(), ", "))
	}
	n := Netem{Name: s}
	var errs []error
	seen := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || v == "" {
			errs = append(errs, fmt.Errorf("%q: want key=value", kv))
			continue
		}
		if seen[k] {
			errs = append(errs, fmt.Errorf("%s given twice", k))
			continue
		}
		seen[k] = true
		var err error
		switch k {
		case "delay":
			n.Delay, err = parseDelay(v)
		case "jitter":
			n.Jitter, err = parseDelay(v)
		case "loss":
			n.Loss, err = parsePercent(v)
		case "reorder":
			n.Reorder, err = parsePercent(v)
		case "rate":
			n.Rate, err = parseRate(v)
		default:
			err = errors.New("unknown key (use delay, jitter, loss, reorder, rate)")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%s: %w", k, v, err))
		}
	}
	if len(errs) == 0 {
		if n.Jitter > n.Delay {
			errs = append(errs, fmt.Errorf("jitter %v is larger than the delay %v", n.Jitter, n.Delay))
		}
		if n.Reorder > 0 && n.Delay == 0 {
			errs = append(errs, errors.New("reorder needs a delay (netem reorders by sending some packets without it)"))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Netem{}, fmt.Errorf("netem %q: %w", s, err)
	}
	return n, nil
}

func parseDelay(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, errors.New("want a duration such as 10ms")
	}
	if d < 0 || d > 10*time.Second {
		return 0, errors.New("must be 0..10s")
	}
	return d, nil
}

func parsePercent(v string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil {
		return 0, errors.New("want a percentage such as 1% or 0.5")
	}
	if f < 0 || f > 100 {
		return 0, errors.New("must be 0..100%")
	}
	return f, nil
}

func parseRate(v string) (uint64, error) {
	l := strings.ToLower(v)
	mult := uint64(1)
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}} {
		if strings.HasSuffix(l, u.suffix) {
			l, mult = strings.TrimSuffix(l, u.suffix), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(l, 64)
	if err != nil || f <= 0 {
		return 0, errors.New("want a positive rate such as 100mbit or 1gbit")
	}
	r := uint64(f * float64(mult))
	if r < 8000 {
		return 0, errors.New("must be at least 8kbit")
	}
	return r, nil
}
