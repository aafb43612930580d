package web

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"
)

// fetch is one GET of a content resource of size bytes over rt, the body
// checked as it arrives: the time to the response's headers and to its
// last byte. kind names what failed, for Errors.
type fetch struct {
	rt      http.RoundTripper
	req     *http.Request
	checker Checker
	buf     []byte
}

func newFetch(ctx context.Context, rt http.RoundTripper, method, url string) (*fetch, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return nil, fmt.Errorf("web: request %s %s: %w", method, url, err)
	}
	return &fetch{rt: rt, req: req, buf: make([]byte, 32<<10)}, nil
}

// do runs the request, expecting size bytes of content.
func (f *fetch) do(size int64) (ttfb, total time.Duration, resp *http.Response, kind string, err error) {
	start := time.Now()
	resp, err = f.rt.RoundTrip(f.req)
	if err != nil {
		return 0, 0, nil, "roundtrip", fmt.Errorf("%s %s: %w", f.req.Method, f.req.URL, err)
	}
	ttfb = time.Since(start)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return ttfb, 0, resp, "status", fmt.Errorf("%s %s: %s: %s", f.req.Method, f.req.URL, resp.Status, msg)
	}
	f.checker.Reset(size)
	if _, err := io.CopyBuffer(&f.checker, resp.Body, f.buf); err != nil {
		return ttfb, 0, resp, "body", fmt.Errorf("%s %s: %w", f.req.Method, f.req.URL, err)
	}
	if err := f.checker.Done(); err != nil {
		return ttfb, 0, resp, "body", fmt.Errorf("%s %s: %w", f.req.Method, f.req.URL, err)
	}
	return ttfb, time.Since(start), resp, "", nil
}

// open makes a RoundTripper of c and opens its connection with one small
// request, so that what is measured next excludes the handshake.
func open(ctx context.Context, c *Client, cache tls.ClientSessionCache) (http.RoundTripper, error) {
	rt, err := c.New(cache)
	if err != nil {
		return nil, fmt.Errorf("web: %s: new connection: %w", c.Name, err)
	}
	f, err := newFetch(ctx, rt, http.MethodGet, c.URL+"/obj/1")
	if err != nil {
		closeRT(rt)
		return nil, err
	}
	if _, _, _, _, err := f.do(1); err != nil {
		closeRT(rt)
		return nil, fmt.Errorf("web: %s: opening a connection: %w", c.Name, err)
	}
	return rt, nil
}

// newResult is a Result of workload on c, with both ends' settings.
func newResult(workload string, c *Client, rt http.RoundTripper) Result {
	r := Result{Workload: workload, Client: c.Name, ClientSettings: c.Settings, ServerSettings: c.Server}
	if u, ok := rt.(UDPRcvBuf); ok {
		r.ClientSettings.UDPRcvBufGranted = u.UDPRcvBufGranted()
	}
	return r
}
