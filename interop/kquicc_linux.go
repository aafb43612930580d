package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

// HTTP3TestEnv names the variable that points at the module's own HTTP/3
// test program, libquic's tests/http3_test (built with the module, like
// perf_test; this project ships none).
const HTTP3TestEnv = "KQUIC_HTTP3_TEST"

func init() { RegisterImpl("kquic-c", openKquicC) }

// KquicC is the QUIC module's own C programs over kernel QUIC: libquic's
// tests/http3_test, an HTTP/3 client and server on nghttp3 and GnuTLS.
// Its server ("-s ADDR:PORT KEY CERT") serves the files of its working
// directory, one connection at a time and one request per connection,
// answering IPv4 only, and exits when a handshake fails; its client ("-c URL") fetches one URL over one
// connection and prints the body. Neither has a setting for Retry,
// resumption, 0-RTT, key updates, cipher suites or versions: the cases that
// need one are unsupported. GnuTLS writes the key log ($SSLKEYLOGFILE).
type KquicC struct{ prog string }

func openKquicC() (Impl, error) {
	p := os.Getenv(HTTP3TestEnv)
	if p == "" {
		return nil, fmt.Errorf("kquic-c: $%s is not set: give the module's built tests/http3_test (lxin/quic's libquic; this project ships none)", HTTP3TestEnv)
	}
	if _, err := os.Stat(p); err != nil {
		return nil, fmt.Errorf("kquic-c: $%s: %w", HTTP3TestEnv, err)
	}
	if err := kmod.Probe(kmod.FeatureQUIC); err != nil {
		return nil, fmt.Errorf("kquic-c: %w (kqbench interop --vm runs it in the guest with $KQUIC_MODULE)", err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	return KquicC{prog: abs}, nil
}

// Name implements Impl.
func (KquicC) Name() string { return "kquic-c" }

// KernelQUIC says it runs over kernel QUIC.
func (KquicC) KernelQUIC() bool { return true }

// ALPNs implements Impl.
func (KquicC) ALPNs() []string { return []string{H3} }

// Supports implements Impl.
func (KquicC) Supports(role Role, c *Case) error {
	switch {
	case c.IPv6:
		return unsupported("http3_test resolves IPv4 addresses only")
	case c.Retry && role == Server:
		return unsupported("http3_test's server has no setting for Retry")
	case role == Server && requestsPerConn(c) > 1:
		return unsupported("http3_test's server keeps one request per connection (its struct http_request): the case's %d requests over one connection, sent together as the runner's clients send them, get each other's answers", requestsPerConn(c))
	case role == Server:
		return nil
	case c.Resumption || c.ZeroRTT:
		return unsupported("http3_test's client keeps no session ticket")
	case c.KeyUpdate:
		return unsupported("http3_test's client has no setting for a key update")
	case c.ChaCha20:
		return unsupported("http3_test's client offers libquic's cipher suites, AES included")
	case c.Version2:
		return unsupported("http3_test's client has no setting for QUIC version 2")
	case len(c.Files) > 1 && !c.MultiConnect:
		return unsupported("http3_test's client fetches one URL per connection, and the case wants its %d files over one", len(c.Files))
	}
	return nil
}

// requestsPerConn is the most requests a client sends over one connection
// in case c (groups).
func requestsPerConn(c *Case) int {
	switch {
	case c.MultiConnect:
		return 1
	case c.Resumption && len(c.Files) > 1:
		return max(1, len(c.Files)-1)
	}
	return len(c.Files)
}

// Serve implements Impl.
func (k KquicC) Serve(ctx context.Context, cfg ServerConfig) (*net.UDPAddr, func() error, error) {
	addr, err := freeUDP(cfg.Addr)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(k.prog, "-s", addr.String(), cfg.KeyFile, cfg.CertFile)
	cmd.Dir = cfg.Root // it serves "." + the request's path
	cmd.Env = append(os.Environ(), "SSLKEYLOGFILE="+cfg.KeyLogFile)
	cmd.Stdout, cmd.Stderr = cfg.Output, cfg.Output
	// A group of its own, ended as one: $KQUIC_HTTP3_TEST may be a script
	// that runs the program as a child (strace, a wrapper of the user's).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("http3_test -s: %w", err)
	}
	exited := make(chan error, 1)
	up, gone := context.WithCancelCause(ctx) // until it listens, or exits
	defer gone(nil)
	go func() {
		err := cmd.Wait()
		gone(fmt.Errorf("it exited before it listened: %v", err))
		exited <- err
	}()
	stop := sync.OnceValue(func() error { // stop may be called more than once
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		return nil
	})
	// Its kernel socket must listen, not only be bound: a first flight
	// sent in between is lost, and a kernel client does not recover from
	// losing one of two Initial packets against a kernel server
	// (knownbugs.PTOFirstInitial).
	up, cancel := context.WithTimeoutCause(up, 10*time.Second, errors.New("it did not listen within 10 s"))
	defer cancel()
	if err := kquic.WaitListening(up, addr.AddrPort()); err != nil {
		stop()
		return nil, nil, fmt.Errorf("http3_test -s: %w", err)
	}
	return addr, stop, nil
}

// Fetch implements Impl: one http3_test -c per path, one after the other.
func (k KquicC) Fetch(ctx context.Context, cfg ClientConfig) error {
	for i, p := range cfg.Paths {
		url := "https://" + net.JoinHostPort(cfg.Server.IP.String(), strconv.Itoa(cfg.Server.Port)) + p
		cmd := exec.CommandContext(ctx, k.prog, "-c", url)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // ended as a group, as the server
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.Env = append(os.Environ(), "SSLKEYLOGFILE="+cfg.KeyLogFile)
		var body bytes.Buffer
		cmd.Stdout, cmd.Stderr = &body, cfg.Output
		err := cmd.Run()
		fmt.Fprintf(cfg.Output, "http3_test -c %s: %d bytes on standard output, %v\n", url, body.Len(), err)
		if err != nil {
			// Its errors follow the body on standard output ("[ERROR] ...").
			tail := body.Bytes()[max(0, body.Len()-300):]
			fmt.Fprintf(cfg.Output, "the end of its standard output: %q\n", tail)
			msg := ""
			if i := bytes.LastIndex(tail, []byte("[ERROR]")); i >= 0 {
				msg = ": " + string(bytes.TrimSpace(tail[i:]))
			}
			return fmt.Errorf("connection %d: http3_test -c %s: %w%s", i+1, url, err, msg)
		}
		// It prints the body, then a newline when the stream ends.
		b, ok := bytes.CutSuffix(body.Bytes(), []byte("\n"))
		if !ok {
			return fmt.Errorf("connection %d: http3_test -c %s: the stream did not end (no final newline after %d bytes)", i+1, url, body.Len())
		}
		if err := os.WriteFile(filepath.Join(cfg.Download, path.Base(p)), b, 0o644); err != nil {
			return errors.Join(fmt.Errorf("connection %d", i+1), err)
		}
	}
	return nil
}

// loneFINToolBug ends the reason of a failure that http3_test's read of a
// lone FIN explains (ExplainFailure).
const loneFINToolBug = "(lxin/quic's tests/http3_test.c, http_read_data, not the module)"

// ExplainFailure implements failureExplainer: http3_test's http_read_data
// (tests/http3_test.c) reads a stream with quic_recvmsg and takes a return
// of 0 or less for "no more data now" when errno holds EAGAIN, else for an
// error. A STREAM frame that brings the stream's FIN and no data makes
// quic_recvmsg return 0 with MSG_QUIC_STREAM_FIN, and errno is whatever the
// last failed call left: EAGAIN, from the read that emptied the socket
// before, and the FIN is dropped (its server never sees the request end
// and never answers; its client never ends), or another value, and the
// connection is given up. quic-go's client sends its request's FIN so when
// the request went out before it closed the stream.
func (KquicC) ExplainFailure(role Role, t *Trace, reason string) string {
	for _, c := range t.Conns {
		switch role {
		case Server:
			if ids := c.UnansweredLoneFINs(); len(ids) > 0 {
				return fmt.Sprintf("http3_test's server never answered request stream %v, whose FIN came alone in a STREAM frame without data: "+
					"its http_read_data takes that FIN's 0-byte quic_recvmsg for no data, as errno still holds EAGAIN, or for an error, "+
					"and so never sees the request end "+loneFINToolBug, ids)
			}
		case Client:
			// Its client gives up (exit status 255 after the body) or
			// never ends; a failure for another reason is not this.
			if !strings.Contains(reason, "exit status 255") && !strings.Contains(reason, "did not end") {
				continue
			}
			for id := range c.LoneFIN[ToClient] {
				if id%4 == 0 {
					return fmt.Sprintf("the server's FIN on stream %d came alone in a STREAM frame without data: http3_test's client "+
						"takes that FIN's 0-byte quic_recvmsg for no data, as errno still holds EAGAIN, or for an error "+loneFINToolBug, id)
				}
			}
		}
	}
	return ""
}
