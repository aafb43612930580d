package interop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func init() { RegisterImpl("ngtcp2", openNgtcp2) }

// Ngtcp2 is Debian's ngtcp2 example programs on GnuTLS (packages
// ngtcp2-client and ngtcp2-server): gtlsclient and gtlsserver, HTTP/3 only.
type Ngtcp2 struct{ client, server string }

func openNgtcp2() (Impl, error) {
	var n Ngtcp2
	var err1, err2 error
	n.client, err1 = exec.LookPath("gtlsclient")
	n.server, err2 = findProgram("gtlsserver", "/usr/sbin/gtlsserver")
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("ngtcp2: %w (install Debian's ngtcp2-client and ngtcp2-server: scripts/deps test)", err)
	}
	return n, nil
}

func findProgram(name, fallback string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	if _, err := os.Stat(fallback); err != nil {
		return "", fmt.Errorf("%s is not installed", name)
	}
	return fallback, nil
}

// Name implements Impl.
func (Ngtcp2) Name() string { return "ngtcp2" }

// ALPNs implements Impl.
func (Ngtcp2) ALPNs() []string { return []string{H3} }

// Supports implements Impl.
func (Ngtcp2) Supports(role Role, c *Case) error {
	if c.Version2 {
		return unsupported("Debian's ngtcp2 0.12 predates QUIC version 2 (RFC 9369)")
	}
	return nil
}

// Serve implements Impl.
func (n Ngtcp2) Serve(ctx context.Context, cfg ServerConfig) (*net.UDPAddr, func() error, error) {
	addr, err := freeUDP(cfg.Addr)
	if err != nil {
		return nil, nil, err
	}
	args := []string{"-q", "-d", cfg.Root}
	if cfg.Retry {
		args = append(args, "--validate-addr")
	}
	args = append(args, addr.IP.String(), strconv.Itoa(addr.Port), cfg.KeyFile, cfg.CertFile)
	keepOpenFileLimit() // a file open per request
	cmd := exec.Command(n.server, args...)
	cmd.Env = append(os.Environ(), "SSLKEYLOGFILE="+cfg.KeyLogFile)
	cmd.Stdout, cmd.Stderr = cfg.Output, cfg.Output
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop := func() error {
		cmd.Process.Kill()
		cmd.Wait()
		return nil
	}
	if err := waitUDP(ctx, addr, 10*time.Second); err != nil {
		stop()
		return nil, nil, fmt.Errorf("gtlsserver: %w", err)
	}
	return addr, stop, nil
}

// Fetch implements Impl.
func (n Ngtcp2) Fetch(ctx context.Context, cfg ClientConfig) error {
	dir := filepath.Dir(cfg.Download)
	session, tp := filepath.Join(dir, "ngtcp2-session.pem"), filepath.Join(dir, "ngtcp2-tp")
	for i, g := range groups(cfg) {
		args := []string{"-q", "--exit-on-all-streams-close", "--download", cfg.Download, "--timeout", "20s", "--sni", cfg.ServerName}
		if cfg.Resumption {
			args = append(args, "--session-file", session, "--tp-file", tp)
			if !cfg.ZeroRTT {
				args = append(args, "--disable-early-data")
			}
		}
		if cfg.KeyUpdate {
			// The update 20 ms after the handshake, the requests 50 ms after
			// it: the whole download then runs in the new key phase,
			// however fast the link.
			args = append(args, "--key-update", "20ms", "--delay-stream", "50ms")
		}
		if cfg.ChaCha20 {
			args = append(args, "--ciphers", "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+CHACHA20-POLY1305") // a GnuTLS priority string
		}
		host := cfg.Server.IP.String()
		authority := net.JoinHostPort(host, strconv.Itoa(cfg.Server.Port))
		args = append(args, host, strconv.Itoa(cfg.Server.Port))
		for _, p := range g {
			args = append(args, "https://"+authority+p)
		}
		cmd := exec.CommandContext(ctx, n.client, args...)
		cmd.Env = append(os.Environ(), "SSLKEYLOGFILE="+cfg.KeyLogFile)
		cmd.Stdout, cmd.Stderr = cfg.Output, cfg.Output
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("gtlsclient (connection %d): %w", i+1, err)
		}
	}
	return nil
}

// freeUDP picks a free UDP port on addr's address, for a program that
// needs a port number given.
func freeUDP(addr string) (*net.UDPAddr, error) {
	a, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	c, err := net.ListenUDP("udp", a)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr), nil
}

// waitUDP waits until a socket is bound to addr's port (/proc/net/udp,
// udp6): a program's server has no other way to say it is ready.
func waitUDP(ctx context.Context, addr *net.UDPAddr, limit time.Duration) error {
	port := fmt.Sprintf(":%04X ", addr.Port)
	deadline := time.Now().Add(limit)
	for {
		for _, f := range []string{"/proc/net/udp", "/proc/net/udp6"} {
			fh, err := os.Open(f)
			if err != nil {
				continue
			}
			sc := bufio.NewScanner(fh)
			for sc.Scan() {
				if fields := strings.Fields(sc.Text()); len(fields) > 1 && strings.HasSuffix(fields[1]+" ", port) {
					fh.Close()
					return nil
				}
			}
			fh.Close()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("nothing listens on UDP port %d after %v", addr.Port, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
