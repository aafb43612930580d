package web

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func serve(method, target string, body io.Reader) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	NewHandler().ServeHTTP(w, httptest.NewRequest(method, target, body))
	return w
}

func TestHandlerRejects(t *testing.T) {
	for _, c := range []struct {
		method, target string
		code           int
		says           string
	}{
		{"GET", "/bytes/-1", 400, "from 0 to"},
		{"GET", "/bytes/12x", 400, "decimal byte count"},
		{"GET", "/bytes/1099511627777", 400, "from 0 to 1099511627776"},
		{"GET", "/obj/1048577", 400, "from 0 to 1048576"},
		{"GET", "/page?k=3", 400, "size"},
		{"GET", "/page?k=10001&size=1", 400, "k"},
		{"POST", "/bytes/10", 405, ""},
		{"GET", "/sink", 405, ""},
		{"GET", "/nothing", 404, ""},
	} {
		w := serve(c.method, c.target, nil)
		if w.Code != c.code || !strings.Contains(w.Body.String(), c.says) {
			t.Errorf("%s %s: %d %q, want %d saying %q", c.method, c.target, w.Code, w.Body, c.code, c.says)
		}
	}
}

func TestHandlerServes(t *testing.T) {
	want, _ := io.ReadAll(Content(200_003))
	for _, target := range []string{"/bytes/200003", "/obj/200003"} {
		w := serve("GET", target, nil)
		if w.Code != 200 || !bytes.Equal(w.Body.Bytes(), want) || w.Header().Get("Content-Length") != "200003" {
			t.Errorf("%s: %d, %d bytes, equal %v", target, w.Code, w.Body.Len(), bytes.Equal(w.Body.Bytes(), want))
		}
	}
	w := serve("POST", "/sink", bytes.NewReader(want))
	var reply SinkReply
	if err := json.Unmarshal(w.Body.Bytes(), &reply); err != nil || w.Code != http.StatusOK {
		t.Fatalf("/sink: %d %q: %v", w.Code, w.Body, err)
	}
	crc := crc32.Checksum(want, castagnoli)
	if reply.Bytes != int64(len(want)) || reply.CRC32C != hex.EncodeToString(crcBytes(crc)) {
		t.Errorf("/sink: %+v, want %d bytes, CRC-32C %08x", reply, len(want), crc)
	}
}
