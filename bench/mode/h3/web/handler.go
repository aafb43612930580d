package web

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Limits of the handler's resources.
const (
	// MaxBytes is the largest /bytes/N (1 TiB).
	MaxBytes = 1 << 40
	// MaxPageResources is the largest k of /page.
	MaxPageResources = 10000
)

// NewHandler returns the handler of the workloads' resources (see the
// package documentation). Bad input gets 400 with the reason, another
// method 405, another path 404.
func NewHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bytes/{n}", serveBytes)
	mux.HandleFunc("GET /obj/{n}", serveObject)
	mux.HandleFunc("GET /page", servePage)
	mux.HandleFunc("POST /sink", serveSink)
	return mux
}

func parseSize(w http.ResponseWriter, what, s string, maxv int64) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > maxv {
		http.Error(w, fmt.Sprintf("%s %q: want a decimal byte count from 0 to %d", what, s, maxv), http.StatusBadRequest)
		return 0, false
	}
	return n, true
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

func serveBytes(w http.ResponseWriter, r *http.Request) {
	n, ok := parseSize(w, "/bytes/N: N", r.PathValue("n"), MaxBytes)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	for off := int64(0); off < n; {
		chunk := buf[:min(int64(len(buf)), n-off)]
		Fill(chunk, off)
		if _, err := w.Write(chunk); err != nil {
			return // the client went away; its side counts the error
		}
		off += int64(len(chunk))
	}
}

func serveObject(w http.ResponseWriter, r *http.Request) {
	n, ok := parseSize(w, "/obj/N: N", r.PathValue("n"), MaxObject)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	w.Write(objects()[:n])
}

func servePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	k, ok := parseSize(w, "/page: k", q.Get("k"), MaxPageResources)
	if !ok {
		return
	}
	size, ok := parseSize(w, "/page: size", q.Get("size"), MaxObject)
	if !ok {
		return
	}
	b := pageHTML(int(k), size)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// SinkReply is what POST /sink answers.
type SinkReply struct {
	// Bytes is the length of the body the server read.
	Bytes int64 `json:"bytes"`
	// CRC32C is the body's CRC-32C (Castagnoli), in hex.
	CRC32C string `json:"crc32c"`
	// Seconds is the time from the handler's start to the end of the body.
	Seconds float64 `json:"seconds"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func serveSink(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	h := crc32.New(castagnoli)
	bp := copyBufs.Get().(*[]byte)
	n, err := io.CopyBuffer(h, r.Body, *bp)
	copyBufs.Put(bp)
	if err != nil {
		http.Error(w, fmt.Sprintf("/sink: reading the body failed after %d bytes: %v", n, err), http.StatusBadRequest)
		return
	}
	reply := SinkReply{Bytes: n, CRC32C: hex.EncodeToString(h.Sum(nil)), Seconds: time.Since(start).Seconds()}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(reply)
}
