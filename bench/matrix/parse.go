package matrix

import (
	"fmt"
	"strconv"
	"strings"
)

// SplitList is the items of a list flag, each given alone or in a
// comma-separated list, trimmed, the empty ones left out.
func SplitList(v []string) []string {
	var out []string
	for _, s := range v {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// ParseSize reads a size: bytes, or with a K or M suffix ("64K").
func ParseSize(s string) (int, error) {
	mult := 1
	num := strings.ToUpper(strings.TrimSpace(s))
	switch {
	case strings.HasSuffix(num, "K"):
		mult, num = 1<<10, strings.TrimSuffix(num, "K")
	case strings.HasSuffix(num, "M"):
		mult, num = 1<<20, strings.TrimSuffix(num, "M")
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size (bytes, or with K or M)", s)
	}
	return n * mult, nil
}

// ParseSizes reads the sizes of a list flag (SplitList).
func ParseSizes(v []string) ([]int, error) {
	var out []int
	for _, s := range SplitList(v) {
		n, err := ParseSize(s)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// ParseCounts reads the whole numbers of a list flag (SplitList); what
// names them in the error.
func ParseCounts(v []string, what string) ([]int, error) {
	var out []int
	for _, s := range SplitList(v) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("%s %q is not a number", what, s)
		}
		out = append(out, n)
	}
	return out, nil
}
