// Package procnet parses the "Name value" counter files the kernel keeps
// under /proc/net (quic/snmp of the QUIC module, tls_stat of kernel TLS).
package procnet

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseNameValue reads one "Name<white space>value" pair a line; blank
// lines are skipped, anything else is an error naming the line.
func ParseNameValue(r io.Reader) (map[string]uint64, error) {
	m := map[string]uint64{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d: want \"Name value\", got %q", line, sc.Text())
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: counter %s: %w", line, f[0], err)
		}
		m[f[0]] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return m, nil
}
