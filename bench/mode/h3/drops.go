//go:build linux

package h3

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"kquic.dev/kquic"
)

// count is a counter's value, or why it could not be read.
type count struct {
	v   int64
	err error
}

// sub is c less base, or -1 when either could not be read.
func (c count) sub(base count) int64 {
	if c.err != nil || base.err != nil {
		return -1
	}
	return c.v - base.v
}

// drops are the UDP receive-buffer drops and the retransmissions of both
// namespaces, and the server's net.core.rmem_max.
type drops struct {
	server, client               count
	serverRetrans, clientRetrans count
	rmemMax                      int
}

// readDrops reads Udp RcvbufErrors in each end's namespace (through
// /proc/thread-self: /proc/net follows the thread group leader's
// namespace).
func readDrops(e Ends) drops {
	var d drops
	read := func(do func(func() error) error, c *count) {
		c.err = do(func() error {
			var err error
			c.v, err = RcvbufErrors()
			return err
		})
	}
	read(e.Server, &d.server)
	read(e.Client, &d.client)
	retrans := func(do func(func() error) error, c *count) {
		c.err = do(func() error {
			var err error
			c.v, err = Retransmissions()
			return err
		})
	}
	retrans(e.Server, &d.serverRetrans)
	retrans(e.Client, &d.clientRetrans)
	e.Server(func() error {
		d.rmemMax, _ = RmemMax()
		return nil
	})
	return d
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

// snmpValue finds a counter in /proc/net/snmp's pairs of lines (names,
// then values, each starting "Proto:").
func snmpValue(b []byte, proto, name string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	var names []string
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != proto+":" {
			continue
		}
		if names == nil {
			names = f[1:]
			continue
		}
		for i, n := range names {
			if n == name && i+1 < len(f) {
				return strconv.ParseInt(f[i+1], 10, 64)
			}
		}
		break
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
