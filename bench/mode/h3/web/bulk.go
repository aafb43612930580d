package web

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"time"
)

// Download fetches /bytes/size once over a connection opened beforehand,
// every byte checked: Seconds runs from the request to the body's last
// byte (Goodput is the download's), TTFBSeconds to its headers.
func Download(ctx context.Context, c *Client, size int64) (Result, error) {
	if err := c.check(); err != nil {
		return Result{}, err
	}
	rt, err := open(ctx, c, nil)
	if err != nil {
		return Result{}, err
	}
	defer closeRT(rt)
	r := newResult("download", c, rt)
	r.Size, r.Conns, r.Streams = size, 1, 1
	f, err := newFetch(ctx, rt, http.MethodGet, fmt.Sprintf("%s/bytes/%d", c.URL, size))
	if err != nil {
		return r, err
	}
	ttfb, total, _, kind, err := f.do(size)
	if err != nil {
		r.Errors.Add(kind, err)
		return r, fmt.Errorf("web: %s download: %w", c.Name, err)
	}
	r.Requests, r.Bytes, r.Seconds, r.TTFBSeconds = 1, size, total.Seconds(), ttfb.Seconds()
	return r, nil
}

// crcReader computes the CRC-32C of what is read through it.
type crcReader struct {
	r   io.Reader
	crc uint32
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.crc = crc32.Update(c.crc, castagnoli, p[:n])
	return n, err
}

// Upload posts size bytes of the content to /sink over a connection
// opened beforehand and checks the server's byte count and CRC-32C against
// what was sent: Seconds runs from the request to the server's answer,
// ServerSeconds is the server's own time for the body.
func Upload(ctx context.Context, c *Client, size int64) (Result, error) {
	if err := c.check(); err != nil {
		return Result{}, err
	}
	rt, err := open(ctx, c, nil)
	if err != nil {
		return Result{}, err
	}
	defer closeRT(rt)
	r := newResult("upload", c, rt)
	r.Size, r.Conns, r.Streams = size, 1, 1
	body := &crcReader{r: Content(size)}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"/sink", io.NopCloser(body))
	if err != nil {
		return r, fmt.Errorf("web: request POST %s/sink: %w", c.URL, err)
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", "application/octet-stream")
	start := time.Now()
	reply, kind, err := postSink(rt, req)
	elapsed := time.Since(start)
	if err == nil {
		want := hex.EncodeToString(crcBytes(body.crc))
		if reply.Bytes != size || reply.CRC32C != want {
			kind, err = "checksum", fmt.Errorf("the server read %d bytes with CRC-32C %s; sent %d with %s", reply.Bytes, reply.CRC32C, size, want)
		}
	}
	if err != nil {
		r.Errors.Add(kind, err)
		return r, fmt.Errorf("web: %s upload: %w", c.Name, err)
	}
	r.Requests, r.Bytes, r.Seconds, r.ServerSeconds = 1, size, elapsed.Seconds(), reply.Seconds
	return r, nil
}

func crcBytes(c uint32) []byte { return []byte{byte(c >> 24), byte(c >> 16), byte(c >> 8), byte(c)} }

func postSink(rt http.RoundTripper, req *http.Request) (SinkReply, string, error) {
	var reply SinkReply
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return reply, "roundtrip", fmt.Errorf("POST %s: %w", req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return reply, "body", fmt.Errorf("POST %s: reading the answer: %w", req.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return reply, "status", fmt.Errorf("POST %s: %s: %s", req.URL, resp.Status, bytes.TrimSpace(b))
	}
	if err := json.Unmarshal(b, &reply); err != nil {
		return reply, "body", errors.Join(fmt.Errorf("POST %s: the answer %q is not the sink's JSON", req.URL, b), err)
	}
	return reply, "", nil
}
