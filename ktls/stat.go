package ktls

import (
	"fmt"
	"io"
	"os"

	"kquic.dev/internal/procnet"
)

// StatPath is where the kernel reports its TLS counters, per network
// namespace.
const StatPath = "/proc/net/tls_stat"

// Stats are the kernel's TLS counters from /proc/net/tls_stat, by name:
// TlsCurrTxSw, TlsCurrRxSw, TlsTxSw, TlsRxSw, TlsDecryptError,
// TlsRxNoPadViolation, TlsTxRekeyOk, TlsRxRekeyOk, TlsRxRekeyReceived and
// more, depending on the kernel.
type Stats map[string]uint64

// ReadStats reads StatPath. It fails when the tls module is not loaded (the
// file appears with it).
func ReadStats() (Stats, error) {
	f, err := os.Open(StatPath)
	if err != nil {
		return nil, fmt.Errorf("ktls: reading kernel TLS counters: %w (the file exists once the tls module is loaded)", err)
	}
	defer f.Close()
	return ParseStats(f)
}

// ParseStats parses the format of /proc/net/tls_stat: one "Name value" pair
// a line, separated by white space.
func ParseStats(r io.Reader) (Stats, error) {
	m, err := procnet.ParseNameValue(r)
	if err != nil {
		return nil, fmt.Errorf("ktls: tls_stat: %w", err)
	}
	return Stats(m), nil
}

// Sub returns s minus old, counter by counter (for counters present in s).
// Gauges such as TlsCurrTxSw may come out negative; they wrap.
func (s Stats) Sub(old Stats) Stats {
	d := Stats{}
	for k, v := range s {
		d[k] = v - old[k]
	}
	return d
}
