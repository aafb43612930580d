// Package ngtcp2 runs Debian's ngtcp2 example programs (packages
// ngtcp2-client and ngtcp2-server: gtlsclient and gtlsserver, ngtcp2 on
// GnuTLS), the C QUIC stack kqbench sets beside quic-go: where they are
// and the arguments of a benchmark's server, which generates a body of N
// bytes for a request for /N, and client, which fetches (or posts to) a
// list of URLs over one connection.
package ngtcp2

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"

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
