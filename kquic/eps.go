package kquic

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
)

// EndpointsPath is where the kernel QUIC module lists its listening
// sockets (per network namespace): a socket is there from listen(2) on, so
// a server is ready for a ClientHello once its address is.
const EndpointsPath = "/proc/net/quic/eps"

// ParseListeners parses the lines of /proc/net/quic/eps ("SOCK STATE
// LOCAL_ADDRESS UDP_ADDRESS UID INODE", tab-separated, after a header) and
// returns each listening socket's local address.
func ParseListeners(r io.Reader) ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] == "SOCK" {
			continue
		}
		if len(f) < 3 {
			return nil, fmt.Errorf("kquic: %s line %d: %q: want SOCK STATE LOCAL_ADDRESS ...", EndpointsPath, n, sc.Text())
		}
		ap, err := parseSeqAddr(f[2])
		if err != nil {
			return nil, fmt.Errorf("kquic: %s line %d: %w", EndpointsPath, n, err)
		}
		out = append(out, ap)
	}
	return out, sc.Err()
}

// parseSeqAddr parses an address as the module prints it: "%pI4:%d" or
// "%pI6c:%d" (no brackets: the port follows the last colon).
func parseSeqAddr(s string) (netip.AddrPort, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return netip.AddrPort{}, fmt.Errorf("address %q: no port", s)
	}
	a, err := netip.ParseAddr(s[:i])
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q: %w", s, err)
	}
	p, err := strconv.ParseUint(s[i+1:], 10, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q: port: %w", s, err)
	}
	return netip.AddrPortFrom(a, uint16(p)), nil
}

// Listening reports whether a kernel QUIC socket of the caller's network
// namespace listens for addr: at addr itself, or at the unspecified address
// of its family on its port.
func Listening(addr netip.AddrPort) (bool, error) {
	f, err := os.Open(EndpointsPath)
	if err != nil {
		return false, fmt.Errorf("kquic: listening sockets: %w (is the QUIC module loaded?)", err)
	}
	defer f.Close()
	lns, err := ParseListeners(f)
	if err != nil {
		return false, err
	}
	return listensFor(lns, addr), nil
}

func listensFor(lns []netip.AddrPort, addr netip.AddrPort) bool {
	want := addr.Addr().Unmap()
	for _, l := range lns {
		a := l.Addr().Unmap()
		if l.Port() == addr.Port() && (a == want || a.IsUnspecified() && a.Is4() == want.Is4()) {
			return true
		}
	}
	return false
}

// listenPoll is how often WaitListening looks: nothing tells another
// process that a socket started listening, so it reads EndpointsPath.
const listenPoll = 10 * time.Millisecond

// WaitListening waits until a kernel QUIC socket of the caller's network
// namespace listens for addr (Listening), for a client about to dial a
// server another process started: a first flight sent before that is lost.
// It returns nil then, Listening's error at once, or, when ctx ends first,
// an error naming addr that wraps context.Cause(ctx) (give the context a
// cause, such as "the server exited", to say why).
func WaitListening(ctx context.Context, addr netip.AddrPort) error {
	t := time.NewTicker(listenPoll)
	defer t.Stop()
	for {
		ok, err := Listening(addr)
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kquic: no kernel QUIC socket listens for %v: %w", addr, context.Cause(ctx))
		case <-t.C:
		}
	}
}
