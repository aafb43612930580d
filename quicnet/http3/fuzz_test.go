package http3

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go/quicvarint"
)

// The parsers a peer reaches, fuzzed: frames of a request stream (header,
// content, trailers), the control stream, SETTINGS and field sections.
// Run one with go test -fuzz FuzzRequestStream ./quicnet/http3/; crashers
// found go into testdata/fuzz as regression cases.

func seedFields(kv ...string) []byte {
	var buf bytes.Buffer
	enc := qpack.NewEncoder(&buf)
	for i := 0; i+1 < len(kv); i += 2 {
		enc.WriteField(qpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return buf.Bytes()
}

func seedFrame(typ uint64, p []byte) []byte {
	return append(appendFrameHeader(nil, typ, uint64(len(p))), p...)
}

var seedRequest = seedFields(":method", "POST", ":scheme", "https", ":authority", "a.test", ":path", "/x?y=1", "content-length", "5", "trailer", "x-t", "cookie", "a=1", "cookie", "b=2")

// checkErr fails on an error that is not one the parsers return: every
// protocol error must carry a code.
func checkErr(t *testing.T, err error) {
	t.Helper()
	var ce *connError
	var se *streamError
	if err == nil || err == io.EOF || err == errHeaderTooLarge || errors.As(err, &ce) || errors.As(err, &se) {
		return
	}
	t.Fatalf("an error without an HTTP/3 code: %v (%T)", err, err)
}

func FuzzRequestStream(f *testing.F) {
	f.Add(append(seedFrame(frameHeaders, seedRequest), seedFrame(frameData, []byte("hello"))...))
	f.Add(append(append(seedFrame(0x21, []byte("x")), seedFrame(frameHeaders, seedRequest)...), append(seedFrame(frameData, []byte("he")), append(seedFrame(frameData, []byte("llo")), seedFrame(frameHeaders, seedFields("x-t", "v"))...)...)...))
	f.Add(seedFrame(frameData, []byte("data first")))
	f.Add(seedFrame(frameHeaders, []byte{0x00, 0x00, 0xd1, 0xd7, 0x50, 0x01, 'a', 0xc1}))
	f.Add(seedFrame(frameHeaders, seedRequest)[:8])
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReader(bytes.NewReader(data))
		p, err := readHeaders(br, 1<<12, true, nil)
		if err != nil {
			checkErr(t, err)
			return
		}
		if uint64(len(p)) > 1<<12 {
			t.Fatalf("a %d-byte field section passed a 4096-byte limit", len(p))
		}
		m, err := parseMessage(p, 1<<12, true)
		if err != nil {
			checkErr(t, err)
			return
		}
		req, err := m.request()
		if err != nil {
			checkErr(t, err)
			return
		}
		if req.Method == "" || req.URL == nil {
			t.Fatalf("a request without method or URL: %+v", req)
		}
		b := &body{br: br, conn: &conn{maxHeader: 1 << 12}, server: true, contentLength: m.contentLength, trailer: req.Trailer, newTrailer: func() http.Header { return http.Header{} }}
		var total int64
		buf := make([]byte, 7)
		for {
			n, err := b.read(buf)
			total += int64(n)
			if m.contentLength >= 0 && total > m.contentLength {
				t.Fatalf("read %d bytes of content, more than its content-length %d", total, m.contentLength)
			}
			if total > int64(len(data)) {
				t.Fatalf("read %d bytes of content from %d bytes of stream", total, len(data))
			}
			if err != nil {
				checkErr(t, err)
				if err == io.EOF && m.contentLength >= 0 && total != m.contentLength {
					t.Fatalf("a clean end after %d bytes of a %d-byte content", total, m.contentLength)
				}
				return
			}
		}
	})
}

func FuzzFieldSection(f *testing.F) {
	f.Add(seedRequest, true)
	f.Add(seedFields(":status", "200", "content-type", "text/plain", "content-length", "12"), false)
	f.Add(seedFields(":status", "2000"), false)
	f.Add(seedFields(":method", "CONNECT", ":authority", "a:443"), true)
	f.Add([]byte{0x00, 0x00, 0x3f, 0xe1, 0x1f}, true)
	f.Fuzz(func(t *testing.T, p []byte, request bool) {
		m, err := parseMessage(p, 1<<12, request)
		if err != nil {
			checkErr(t, err)
			return
		}
		var size int
		for k, vv := range m.header {
			for _, v := range vv {
				size += len(k) + len(v)
			}
		}
		if size > 1<<12 {
			t.Fatalf("a %d-byte header passed the 4096-byte limit", size)
		}
		if request {
			if _, err := m.request(); err != nil {
				checkErr(t, err)
			}
		} else if len(m.status) != 3 {
			t.Fatalf("status %q", m.status)
		}
	})
}

func FuzzSettings(f *testing.F) {
	f.Add(appendSettings(nil, settings{MaxFieldSectionSize: 1 << 20})[2:])
	f.Add([]byte{0x06, 0x44, 0x00, 0x01, 0x00, 0x07, 0x00, 0x21, 0x05})
	f.Add([]byte{0x06, 0x01, 0x06, 0x02})
	f.Fuzz(func(t *testing.T, p []byte) {
		s, err := parseSettings(p)
		if err != nil {
			checkErr(t, err)
			return
		}
		// What parses re-encodes to the same settings.
		b := appendSettings(nil, s)
		fh, err := readFrameHeader(bytes.NewReader(b))
		if err != nil || fh.Type != frameSettings {
			t.Fatalf("re-encoded SETTINGS: %v %+v", err, fh)
		}
		s2, err := parseSettings(b[len(b)-int(fh.Length):])
		if err != nil {
			t.Fatalf("re-encoded SETTINGS do not parse: %v", err)
		}
		if s2.MaxFieldSectionSize != s.MaxFieldSectionSize || s2.QPACKMaxTableCapacity != s.QPACKMaxTableCapacity || s2.QPACKBlockedStreams != s.QPACKBlockedStreams ||
			s2.Datagram != s.Datagram || s2.ExtendedConnect != s.ExtendedConnect {
			t.Fatalf("settings %+v re-encoded as %+v", s, s2)
		}
	})
}

func FuzzControlStream(f *testing.F) {
	settingsFrame := appendSettings(nil, settings{MaxFieldSectionSize: 100})
	f.Add(settingsFrame, false)
	f.Add(append(append([]byte{}, settingsFrame...), appendGoAway(nil, 8)...), false)
	f.Add(append(append(append([]byte{}, settingsFrame...), appendGoAway(nil, 8)...), appendGoAway(nil, 12)...), false)
	f.Add(append(append([]byte{}, settingsFrame...), seedFrame(frameMaxPushID, quicvarint.Append(nil, 3))...), true)
	f.Add(seedFrame(frameGoAway, []byte{0}), true)
	f.Fuzz(func(t *testing.T, data []byte, server bool) {
		var last uint64
		var goaways int
		c := &conn{server: server, peerSettings: make(chan struct{})}
		c.onGoAway = func(id uint64) {
			if goaways > 0 && id > last {
				t.Fatalf("GOAWAY %d after %d passed", id, last)
			}
			if !server && id%4 != 0 {
				t.Fatalf("GOAWAY with stream ID %d passed", id)
			}
			last = id
			goaways++
		}
		err := c.readControl(bufio.NewReader(bytes.NewReader(data)))
		if err == nil {
			t.Fatal("the control stream ended without H3_CLOSED_CRITICAL_STREAM")
		}
		checkErr(t, err)
	})
}
