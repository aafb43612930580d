//go:build linux

package matrix

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ParseAffinity reads the --affinity flag: "auto" (pin to the first two
// CPUs this process may run on, where it has two or more), "off", or
// "CLIENT,SERVER" CPU numbers.
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
		for i := 0; i < runtime.NumCPU()*4 && len(cpus) < 2; i++ {
			if set.IsSet(i) {
				cpus = append(cpus, i)
			}
		}
		if len(cpus) < 2 {
			return nil, nil // one CPU: nothing to separate
		}
		return &Affinity{Client: cpus[0], Server: cpus[1]}, nil
	}
	c, sv, ok := strings.Cut(s, ",")
	a := &Affinity{}
	var err1, err2 error
	a.Client, err1 = strconv.Atoi(strings.TrimSpace(c))
	a.Server, err2 = strconv.Atoi(strings.TrimSpace(sv))
	if !ok || err1 != nil || err2 != nil || a.Client < 0 || a.Server < 0 {
		return nil, fmt.Errorf("affinity %q: want auto, off or CLIENT,SERVER CPU numbers (such as 0,1)", s)
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil {
		for _, cpu := range []int{a.Client, a.Server} {
			if !set.IsSet(cpu) {
				return nil, fmt.Errorf("affinity %q: this process may not run on CPU %d (see taskset -p $$ and the online CPUs)", s, cpu)
			}
		}
	}
	return a, nil
}
