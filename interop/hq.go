package interop

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// hqStream is a bidirectional stream whose Close sends FIN.
type hqStream interface {
	io.Reader
	io.Writer
	Close() error
}

// serveHQ answers one HTTP/0.9 request: "GET /path\r\n", the file, FIN;
// then it reads the request to its FIN. A client may send the FIN in a
// frame of its own (the kernel does, after the line): a quic-go server
// counts a stream as open, and gives no credit for a new one, until its
// application has read that FIN, so a server that stops at the line runs
// a client of many streams out of them (multiplexing).
func serveHQ(s hqStream, root string) error {
	br := bufio.NewReader(io.LimitReader(s, 4096))
	defer io.Copy(io.Discard, br)
	line, err := br.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "GET" {
		s.Close()
		return fmt.Errorf("hq: request %q", line)
	}
	file, err := os.Open(filepath.Join(root, path.Clean("/"+f[1])))
	if err != nil {
		s.Close()
		return err
	}
	defer file.Close()
	if _, err := io.Copy(s, file); err != nil {
		return err
	}
	return s.Close()
}

// serveHQConn answers every request stream accept gives, until it fails
// (the connection's end).
func serveHQConn(accept func() (hqStream, error), root string) {
	for {
		s, err := accept()
		if err != nil {
			return
		}
		go serveHQ(s, root)
	}
}

// fetchHQ fetches paths over streams from open, a few at a time, into dir.
func fetchHQ(ctx context.Context, open func(context.Context) (hqStream, error), paths []string, dir string) error {
	return fetchEach(paths, func(p string) error { return fetchOneHQ(ctx, open, p, dir) })
}

// maxFetches bounds the requests a client has in flight at once, as the
// runner's clients request a case's files in parallel.
const maxFetches = 32

// fetchEach runs fetch for every path, up to maxFetches at a time, and
// joins their errors, each named by its path.
func fetchEach(paths []string, fetch func(p string) error) error {
	sem := make(chan struct{}, maxFetches)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, p := range paths {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := fetch(p); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", p, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func fetchOneHQ(ctx context.Context, open func(context.Context) (hqStream, error), p, dir string) error {
	s, err := open(ctx)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(s, "GET "+p+"\r\n"); err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	return saveStream(s, dir, p)
}

// saveStream writes what r reads into dir, named as path p's last element.
func saveStream(r io.Reader, dir, p string) error {
	f, err := os.Create(filepath.Join(dir, path.Base(strings.TrimSpace(p))))
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// groups splits a client's paths into its connections' shares.
func groups(cfg ClientConfig) [][]string {
	switch {
	case cfg.MultiConnect:
		var out [][]string
		for _, p := range cfg.Paths {
			out = append(out, []string{p})
		}
		return out
	case cfg.Resumption && len(cfg.Paths) > 1:
		return [][]string{cfg.Paths[:1], cfg.Paths[1:]}
	}
	return [][]string{cfg.Paths}
}

// clientTLS is a Go client's TLS configuration for cfg.
func clientTLS(cfg ClientConfig) *tls.Config {
	return &tls.Config{RootCAs: cfg.Roots, ServerName: cfg.ServerName, NextProtos: []string{cfg.ALPN},
		KeyLogWriter: cfg.KeyLog, ClientSessionCache: tls.NewLRUClientSessionCache(4), MinVersion: tls.VersionTLS13}
}

// goClientLimits are the cases a client on crypto/tls cannot serve.
func goClientLimits(c *Case) error {
	if c.ChaCha20 {
		return unsupported("crypto/tls offers every TLS 1.3 cipher suite and has no setting to offer ChaCha20 alone")
	}
	return nil
}
