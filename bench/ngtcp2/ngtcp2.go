// Package ngtcp2 runs Debian's ngtcp2 example programs (packages
// ngtcp2-client and ngtcp2-server: gtlsclient and gtlsserver, ngtcp2 on
// GnuTLS), the C QUIC stack kqbench sets beside quic-go: where they are
// and the arguments of a benchmark's server, which generates a body of N
// bytes for a request for /N, and client, which fetches (or posts to) a
// list of URLs over one connection.
package ngtcp2

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"time"

	"kquic.dev/bench/matrix"
)

// MaxBody is the largest body the server generates for one request
// (--max-dyn-length).
const MaxBody = 4 << 30

// Programs finds gtlsclient and gtlsserver (Debian installs the
// server in /usr/sbin), or says how to get them.
func Programs() (client, server string, err error) {
	client, err1 := exec.LookPath("gtlsclient")
	server, err2 := exec.LookPath("gtlsserver")
	if err2 != nil {
		if _, err := os.Stat("/usr/sbin/gtlsserver"); err == nil {
			server, err2 = "/usr/sbin/gtlsserver", nil
		}
	}
	if err1 != nil || err2 != nil {
		return "", "", fmt.Errorf("ngtcp2's gtlsclient and gtlsserver are not installed (apt-get install ngtcp2-client ngtcp2-server: scripts/deps test)")
	}
	return client, server, nil
}

// ServerArgs are gtlsserver's arguments for a cell, listening on
// addr:port: quiet, bodies up to 4 GiB, datagrams of the MTU (the UDP
// payload of an IPv4 packet that fills it), GSO off by one datagram per
// send (--max-gso-dgrams 1), the congestion control.
func ServerArgs(c matrix.Cell, root string, addr netip.Addr, port int, key, cert string) []string {
	args := []string{"-q", "-d", root, "--max-dyn-length", strconv.Itoa(MaxBody), "--max-udp-payload-size", strconv.Itoa(c.MTU - 28)}
	if !c.GSO {
		args = append(args, "--max-gso-dgrams", "1")
	}
	if c.CC != "" {
		args = append(args, "--cc", c.CC)
	}
	return append(args, addr.String(), strconv.Itoa(port), key, cert)
}

// ClientArgs are gtlsclient's arguments to fetch (or, up, post the
// file data to) each of paths from addr:port over one connection: quiet,
// exiting when every stream has closed.
func ClientArgs(c matrix.Cell, addr netip.Addr, port int, data string, paths []string) []string {
	args := []string{"-q", "--exit-on-all-streams-close", "--timeout", "30s"}
	if c.CC != "" {
		args = append(args, "--cc", c.CC)
	}
	if data != "" {
		args = append(args, "-m", "POST", "-d", data)
	}
	hp := netip.AddrPortFrom(addr, uint16(port)).String()
	args = append(args, addr.String(), strconv.Itoa(port))
	for _, p := range paths {
		args = append(args, "https://"+hp+p)
	}
	return args
}

// WriteBody makes path a file of n bytes to post (a sparse one: reading
// it costs no disk).
func WriteBody(path string, n int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := f.Truncate(n); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// StreamSpan reads a client's qlog (--qlog-file, JSON-SEQ, times in
// milliseconds from the connection's start) and returns the span from
// the first packet it sent with data on stream id (the request) to the
// last packet it received with data on that stream (the response's last
// byte): the request to the last byte, the program's start and the
// handshake left out.
func StreamSpan(qlog []byte, id int64) (time.Duration, error) {
	first, last := -1.0, -1.0
	for _, rec := range bytes.Split(qlog, []byte{0x1e}) {
		rec = bytes.TrimSpace(rec)
		if len(rec) == 0 || !bytes.Contains(rec, []byte(`"stream"`)) {
			continue
		}
		var ev struct {
			Time float64 `json:"time"`
			Name string  `json:"name"`
			Data struct {
				Frames []struct {
					Type     string `json:"frame_type"`
					StreamID int64  `json:"stream_id"`
				} `json:"frames"`
			} `json:"data"`
		}
		if err := json.Unmarshal(rec, &ev); err != nil {
			return 0, fmt.Errorf("the client's qlog: %w", err)
		}
		on := false
		for _, f := range ev.Data.Frames {
			on = on || (f.Type == "stream" && f.StreamID == id)
		}
		switch {
		case !on:
		case ev.Name == "transport:packet_sent" && first < 0:
			first = ev.Time
		case ev.Name == "transport:packet_received":
			last = ev.Time
		}
	}
	if first < 0 || last < first {
		return 0, fmt.Errorf("the client's qlog has no request and response on stream %d", id)
	}
	return time.Duration((last - first) * float64(time.Millisecond)), nil
}
