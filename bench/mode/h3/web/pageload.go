package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// PageOptions shape the page workload.
type PageOptions struct {
	// Resources is the page's sub-resources, Size the bytes of each.
	Resources int
	Size      int64
	// Cold opens the connection with the page's request (the handshake
	// counted, as on a first visit); otherwise it is opened beforehand.
	Cold bool
}

// Page loads /page?k=Resources&size=Size as a browser does: the HTML, then
// every sub-resource it names at once, each body checked. Seconds is the
// time from the page's request to the last byte of its last resource;
// Requests counts the HTML and the resources that completed.
func Page(ctx context.Context, c *Client, o PageOptions) (Result, error) {
	if err := c.check(); err != nil {
		return Result{}, err
	}
	if o.Resources < 0 || o.Resources > MaxPageResources || o.Size < 0 || o.Size > MaxObject {
		return Result{}, fmt.Errorf("web: page %+v: want 0 to %d resources of 0 to %d bytes", o, MaxPageResources, MaxObject)
	}
	var rt http.RoundTripper
	var err error
	if o.Cold {
		rt, err = c.New(nil)
	} else {
		rt, err = open(ctx, c, nil)
	}
	if err != nil {
		return Result{}, err
	}
	defer closeRT(rt)
	r := newResult("page", c, rt)
	r.Size, r.Conns, r.Streams, r.Resources = o.Size, 1, o.Resources, o.Resources
	start := time.Now()
	links, htmlBytes, kind, err := fetchPage(ctx, rt, fmt.Sprintf("%s/page?k=%d&size=%d", c.URL, o.Resources, o.Size))
	if err == nil && len(links) != o.Resources {
		kind, err = "body", fmt.Errorf("the page names %d resources, asked for %d", len(links), o.Resources)
	}
	if err != nil {
		r.Errors.Add(kind, err)
		return r, fmt.Errorf("web: %s page: %w", c.Name, err)
	}
	r.Requests, r.Bytes = 1, htmlBytes
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, l := range links {
		wg.Go(func() {
			f, err := newFetch(ctx, rt, http.MethodGet, c.URL+l)
			kind := "request"
			if err == nil {
				_, _, _, kind, err = f.do(o.Size)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				r.Errors.Add(kind, err)
				return
			}
			r.Requests++
			r.Bytes += o.Size
		})
	}
	wg.Wait()
	r.Seconds = time.Since(start).Seconds()
	if r.Errors.Count > 0 {
		return r, fmt.Errorf("web: %s page: %d of %d resources failed: %s", c.Name, r.Errors.Count, o.Resources, r.Errors)
	}
	return r, nil
}

// fetchPage gets the HTML and the links it names.
func fetchPage(ctx context.Context, rt http.RoundTripper, url string) (links []string, n int64, kind string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, "request", err
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, 0, "roundtrip", fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, 0, "body", fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, 0, "status", fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(b))
	}
	links, err = pageLinks(bytes.NewReader(b))
	if err != nil {
		return nil, 0, "body", fmt.Errorf("GET %s: %w", url, err)
	}
	return links, int64(len(b)), "", nil
}
