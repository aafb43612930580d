package kquic

import (
	"fmt"
	"io"
	"os"

	"kquic.dev/internal/procnet"
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
	m, err := procnet.ParseNameValue(r)
	if err != nil {
		return nil, fmt.Errorf("kquic: counters: %w", err)
	}
	return m, nil
}
