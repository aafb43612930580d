//go:build linux

package h3

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"kquic.dev/internal/procnet"
	"kquic.dev/kquic"
)

// Counts are one namespace's kernel counters an h3-mode sample reports:
// UDP datagrams dropped for a full receive buffer, retransmissions (TCP
// segments and kernel QUIC frames), and net.core.rmem_max. A counter that
// could not be read is -1 (rmem_max 0).
type Counts struct {
	RcvbufErrors int64 `json:"rcvbuf_errors"`
	Retrans      int64 `json:"retrans"`
	RmemMax      int   `json:"rmem_max,omitempty"`
}

// ReadCounts reads the counters of the namespace do runs in (through
// /proc/thread-self: /proc/net follows the thread group leader's
// namespace).
func ReadCounts(do func(func() error) error) Counts {
	c := Counts{RcvbufErrors: -1, Retrans: -1}
	do(func() error {
		if n, err := RcvbufErrors(); err == nil {
			c.RcvbufErrors = n
		}
		if n, err := Retransmissions(); err == nil {
			c.Retrans = n
		}
		c.RmemMax, _ = RmemMax()
		return nil
	})
	return c
}

// Sub is c less base (-1 where either is unknown); rmem_max is c's.
func (c Counts) Sub(base Counts) Counts {
	d := func(a, b int64) int64 {
		if a < 0 || b < 0 {
			return -1
		}
		return a - b
	}
	return Counts{RcvbufErrors: d(c.RcvbufErrors, base.RcvbufErrors), Retrans: d(c.Retrans, base.Retrans), RmemMax: c.RmemMax}
}

// RcvbufErrors is the calling thread's namespace's count of UDP datagrams
// dropped for a full socket receive buffer (Udp RcvbufErrors in
// /proc/net/snmp).
func RcvbufErrors() (int64, error) {
	b, err := os.ReadFile("/proc/thread-self/net/snmp")
	if err != nil {
		return 0, fmt.Errorf("read the UDP counters: %w", err)
	}
	return snmpValue(b, "Udp", "RcvbufErrors")
}

// Retransmissions is what the calling thread's namespace's kernel sent
// again: TCP segments (Tcp RetransSegs of /proc/net/snmp) and, where the
// QUIC module is loaded, QUIC frames (QuicFrmRetrans of
// /proc/net/quic/snmp). quic-go's retransmissions are its own, not
// counted here.
func Retransmissions() (int64, error) {
	b, err := os.ReadFile("/proc/thread-self/net/snmp")
	if err != nil {
		return 0, fmt.Errorf("read the TCP counters: %w", err)
	}
	n, err := snmpValue(b, "Tcp", "RetransSegs")
	if err != nil {
		return 0, err
	}
	f, err := os.Open("/proc/thread-self/net/quic/snmp")
	if err != nil {
		return n, nil // no QUIC module: TCP's only
	}
	defer f.Close()
	m, err := kquic.ParseSNMP(f)
	if err != nil {
		return 0, err
	}
	return n + int64(m["QuicFrmRetrans"]), nil
}

// snmpValue is counter proto.name of /proc/net/snmp's text b.
func snmpValue(b []byte, proto, name string) (int64, error) {
	if v, ok := procnet.ParseCounters(b)[proto+"."+name]; ok {
		return v, nil
	}
	return 0, fmt.Errorf("/proc/net/snmp has no %s %s", proto, name)
}

// RmemMax is net.core.rmem_max: the largest SO_RCVBUF a socket gets
// without SO_RCVBUFFORCE.
func RmemMax() (int, error) {
	b, err := os.ReadFile("/proc/sys/net/core/rmem_max")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
