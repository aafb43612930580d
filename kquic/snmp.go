package kquic

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// SNMPPath is where the kernel QUIC module publishes its counters (per
// network namespace).
const SNMPPath = "/proc/net/quic/snmp"

// ReadSNMP returns the module's counters (QuicConnCurrentEstabs,
// QuicPktRcvDrop, QuicFrmRetrans, ...) of the caller's network namespace.
func ReadSNMP() (map[string]uint64, error) {
	f, err := os.Open(SNMPPath)
	if err != nil {
		return nil, fmt.Errorf("kquic: read counters: %w (is the QUIC module loaded?)", err)
	}
	defer f.Close()
	return ParseSNMP(f)
}

// ParseSNMP parses the "Name<whitespace>value" lines of /proc/net/quic/snmp.
func ParseSNMP(r io.Reader) (map[string]uint64, error) {
	m := map[string]uint64{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("kquic: counters line %d: want a name and a value, got %q", line, sc.Text())
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("kquic: counters line %d: %w", line, err)
		}
		m[f[0]] = v
	}
	return m, sc.Err()
}
