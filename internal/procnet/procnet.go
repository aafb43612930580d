// Package procnet parses the counter files the kernel keeps under /proc/net:
// snmp's pairs of lines, and the "Name value" files (quic/snmp of the QUIC
// module, tls_stat of kernel TLS).
package procnet

import (
	"bufio"
	"bytes"
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

// ParseCounters reads both layouts of /proc/net counter files:
//
//	Udp: InDatagrams NoPorts ...      (a header line, then a value line
//	Udp: 10 0 ...                      with the same prefix: snmp)
//	TlsCurrTxSw   0                   (name and value: tls_stat, quic/snmp)
//
// Keys are "Udp.InDatagrams" and "TlsCurrTxSw".
func ParseCounters(b []byte) map[string]int64 {
	out := map[string]int64{}
	var header []string
	var headerPrefix string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if p, ok := strings.CutSuffix(fields[0], ":"); ok {
			if header != nil && p == headerPrefix && len(fields) == len(header)+1 {
				for i, name := range header {
					if v, err := strconv.ParseInt(fields[i+1], 10, 64); err == nil {
						out[p+"."+name] = v
					}
				}
				header = nil
				continue
			}
			header, headerPrefix = fields[1:], p
			continue
		}
		if len(fields) == 2 {
			if v, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
				out[fields[0]] = v
			}
		}
	}
	return out
}
