//go:build linux

package matrix

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ParseAffinity reads the --affinity flag: "auto" (pin to the CPUs this
// process may run on: one connection to the first two, where it has two
// or more; see Affinity.ForConns for several), "off" or "none", or
// "CLIENT,SERVER" CPU numbers, iperf3 -A's pair, or one pair per
// connection separated by slashes ("0,4/1,5/2,6/3,7").
func ParseAffinity(s string) (*Affinity, error) {
	switch s {
	case "off", "none", "":
		return nil, nil
	case "auto":
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			return nil, fmt.Errorf("affinity: %w", err)
		}
		var cpus []int
		for i := 0; i < runtime.NumCPU()*4 && len(cpus) < set.Count(); i++ {
			if set.IsSet(i) {
				cpus = append(cpus, i)
			}
		}
		return AutoAffinity(cpus), nil
	}
	a := &Affinity{}
	for i, pair := range strings.Split(s, "/") {
		c, sv, ok := strings.Cut(pair, ",")
		var p CPUPair
		var err1, err2 error
		p.Client, err1 = strconv.Atoi(strings.TrimSpace(c))
		p.Server, err2 = strconv.Atoi(strings.TrimSpace(sv))
		if !ok || err1 != nil || err2 != nil || p.Client < 0 || p.Server < 0 {
			return nil, fmt.Errorf("affinity %q: want auto, none, or CLIENT,SERVER CPU numbers (such as 0,1), one pair per connection separated by / (0,4/1,5)", s)
		}
		if i == 0 {
			a.Client, a.Server = p.Client, p.Server
		}
		a.Pairs = append(a.Pairs, p)
	}
	if len(a.Pairs) == 1 {
		a.Pairs = nil
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil {
		for _, p := range append([]CPUPair{{a.Client, a.Server}}, a.Pairs...) {
			for _, cpu := range []int{p.Client, p.Server} {
				if !set.IsSet(cpu) {
					return nil, fmt.Errorf("affinity %q: this process may not run on CPU %d (see taskset -p $$ and the online CPUs)", s, cpu)
				}
			}
		}
	}
	return a, nil
}
