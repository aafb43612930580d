package ktls

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
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
	s := Stats{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("ktls: tls_stat line %d: want \"Name value\", got %q", line, sc.Text())
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("ktls: tls_stat line %d: counter %s: %w", line, f[0], err)
		}
		s[f[0]] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ktls: reading tls_stat: %w", err)
	}
	return s, nil
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
