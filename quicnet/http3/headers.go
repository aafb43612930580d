package http3

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/quic-go/qpack"
	"golang.org/x/net/http/httpguts"
)

// fieldOverhead is what RFC 9114 §4.2.2 counts for a field besides its
// name and value.
const fieldOverhead = 32

// errHeaderTooLarge is a field section larger than this side takes: a
// server answers 431.
var errHeaderTooLarge = errors.New("http3: header field section too large")

// decodeFields decodes a QPACK field section, calling fn for each field,
// and stops with errHeaderTooLarge once the decoded size passes max (0: no
// limit). A section QPACK cannot decode ends the connection with
// QPACK_DECOMPRESSION_FAILED (RFC 9204 §2.2).
func decodeFields(p []byte, max uint64, fn func(name, value string) error) error {
	next := qpack.NewDecoder().Decode(p)
	var size uint64
	for {
		f, err := next()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return &connError{Code: ErrCodeQPACKDecompressionFailed, Msg: "field section: " + err.Error()}
		}
		size += uint64(len(f.Name)+len(f.Value)) + fieldOverhead
		if max > 0 && size > max {
			return errHeaderTooLarge
		}
		if err := fn(f.Name, f.Value); err != nil {
			return err
		}
	}
}

// malformed is a message RFC 9114 §4.1.2 calls malformed: its stream is
// reset with H3_MESSAGE_ERROR.
func malformed(format string, args ...any) error {
	return &streamError{Code: ErrCodeMessageError, Msg: fmt.Sprintf(format, args...)}
}

// connectionSpecific are the fields HTTP/3 forbids (RFC 9114 §4.2).
var connectionSpecific = map[string]bool{
	"connection": true, "keep-alive": true, "proxy-connection": true,
	"transfer-encoding": true, "upgrade": true,
}

// checkField validates a regular field: a lowercase token name, a valid
// value, no connection-specific field.
func checkField(name, value string) error {
	if name == "" {
		return malformed("empty field name")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 'A' && c <= 'Z' {
			return malformed("field name %q has uppercase letters", name)
		}
	}
	if !httpguts.ValidHeaderFieldName(name) {
		return malformed("invalid field name %q", name)
	}
	if !httpguts.ValidHeaderFieldValue(value) {
		return malformed("invalid value of field %q", name)
	}
	if connectionSpecific[name] || (name == "te" && value != "trailers") {
		return malformed("connection-specific field %q", name)
	}
	return nil
}

// message is a decoded field section: pseudo-fields and the header.
type message struct {
	method, scheme, authority, path, protocol, status string
	header                                            http.Header
	contentLength                                     int64 // -1: not given
}

// parseMessage decodes a request's (request true) or a response's field
// section and checks it as RFC 9114 §4.3 says.
func parseMessage(p []byte, max uint64, request bool) (*message, error) {
	m := &message{header: http.Header{}, contentLength: -1}
	regular := false
	var cookies []string
	err := decodeFields(p, max, func(name, value string) error {
		if strings.HasPrefix(name, ":") {
			if regular {
				return malformed("pseudo-header %s after a regular field", name)
			}
			var dst *string
			switch {
			case request && name == ":method":
				dst = &m.method
			case request && name == ":scheme":
				dst = &m.scheme
			case request && name == ":authority":
				dst = &m.authority
			case request && name == ":path":
				dst = &m.path
			case request && name == ":protocol":
				dst = &m.protocol
			case !request && name == ":status":
				dst = &m.status
			default:
				return malformed("unknown pseudo-header %s", name)
			}
			if *dst != "" {
				return malformed("pseudo-header %s twice", name)
			}
			if value == "" {
				return malformed("empty pseudo-header %s", name)
			}
			*dst = value
			return nil
		}
		regular = true
		if err := checkField(name, value); err != nil {
			return err
		}
		switch name {
		case "cookie":
			cookies = append(cookies, value) // joined below (RFC 9114 §4.2.1)
			return nil
		case "content-length":
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil || n < 0 {
				return malformed("invalid content-length %q", value)
			}
			if m.contentLength >= 0 && m.contentLength != n {
				return malformed("two content-lengths, %d and %d", m.contentLength, n)
			}
			m.contentLength = n
		}
		m.header[http.CanonicalHeaderKey(name)] = append(m.header[http.CanonicalHeaderKey(name)], value)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(cookies) > 0 {
		m.header["Cookie"] = []string{strings.Join(cookies, "; ")}
	}
	if request {
		return m, m.checkRequest()
	}
	if len(m.status) != 3 || m.status[0] < '1' || m.status[0] > '5' {
		return nil, malformed("invalid :status %q", m.status)
	}
	return m, nil
}

func (m *message) checkRequest() error {
	if m.method == "" {
		return malformed("no :method")
	}
	if m.method == http.MethodConnect && m.protocol == "" {
		if m.scheme != "" || m.path != "" {
			return malformed("CONNECT with :scheme or :path")
		}
		if m.authority == "" {
			return malformed("CONNECT without :authority")
		}
		return nil
	}
	if m.protocol != "" && m.method != http.MethodConnect {
		return malformed(":protocol in a %s request", m.method)
	}
	if m.scheme == "" || m.path == "" {
		return malformed("request without :scheme or :path")
	}
	if m.authority == "" && m.header.Get("Host") == "" && (m.scheme == "http" || m.scheme == "https") {
		return malformed("request without :authority or host")
	}
	return nil
}

// request builds the server's *http.Request (without body or context).
func (m *message) request() (*http.Request, error) {
	var u *url.URL
	requestURI := m.path
	if m.method == http.MethodConnect && m.protocol == "" {
		u = &url.URL{Host: m.authority}
		requestURI = m.authority
	} else {
		var err error
		if u, err = url.ParseRequestURI(m.path); err != nil && m.path != "*" {
			return nil, malformed("invalid :path %q: %v", m.path, err)
		}
		if u == nil {
			u = &url.URL{Path: "*"}
		}
		u.Scheme = m.scheme
		u.Host = m.authority
	}
	host := m.authority
	if host == "" {
		host = m.header.Get("Host")
	}
	req := &http.Request{
		Method:        m.method,
		URL:           u,
		Proto:         "HTTP/3.0",
		ProtoMajor:    3,
		Header:        m.header,
		ContentLength: m.contentLength,
		Host:          host,
		RequestURI:    requestURI,
	}
	if m.protocol != "" {
		req.Proto = m.protocol
	}
	req.Trailer = declaredTrailers(m.header)
	return req, nil
}

// declaredTrailers is the Trailer map a "Trailer" field announces: keys
// with no values yet, filled when the trailers arrive.
func declaredTrailers(h http.Header) http.Header {
	var t http.Header
	for _, v := range h.Values("Trailer") {
		for _, k := range strings.Split(v, ",") {
			k = http.CanonicalHeaderKey(strings.TrimSpace(k))
			if k == "" {
				continue
			}
			if t == nil {
				t = http.Header{}
			}
			t[k] = nil
		}
	}
	return t
}

// parseTrailers decodes a trailer section into dst: no pseudo-headers.
func parseTrailers(p []byte, max uint64, dst http.Header) error {
	return decodeFields(p, max, func(name, value string) error {
		if strings.HasPrefix(name, ":") {
			return malformed("pseudo-header %s in trailers", name)
		}
		if err := checkField(name, value); err != nil {
			return err
		}
		k := http.CanonicalHeaderKey(name)
		dst[k] = append(dst[k], value)
		return nil
	})
}

// encoder writes QPACK field sections into a growing buffer, counting
// their size as RFC 9114 §4.2.2 does.
type encoder struct {
	buf  []byte
	size uint64
	enc  *qpack.Encoder
}

func (e *encoder) Write(p []byte) (int, error) {
	e.buf = append(e.buf, p...)
	return len(p), nil
}

// reset starts a new section, keeping the buffer's space.
func (e *encoder) reset() {
	e.buf = e.buf[:0]
	e.size = 0
	if e.enc == nil {
		e.enc = qpack.NewEncoder(e)
	}
	e.enc.Close() // the next field starts a new section prefix
}

func (e *encoder) field(name, value string) {
	e.size += uint64(len(name)+len(value)) + fieldOverhead
	e.enc.WriteField(qpack.HeaderField{Name: name, Value: value}) // writes to e: no error
}

// header writes h's fields, lowercased, leaving out connection-specific
// ones and the keys skip names (as h spells them).
func (e *encoder) header(h http.Header, skip func(string) bool) error {
	for k, vv := range h {
		if skip != nil && skip(k) {
			continue
		}
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Errorf("http3: invalid header field name %q", k)
		}
		name := lowerHeader(k)
		if connectionSpecific[name] {
			continue
		}
		for _, v := range vv {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Errorf("http3: invalid value %q of header field %q", v, k)
			}
			if name == "te" && v != "trailers" {
				continue
			}
			e.field(name, v)
		}
	}
	return nil
}

// frame returns the section as a HEADERS frame, appended to b.
func (e *encoder) frame(b []byte) []byte {
	b = appendFrameHeader(b, frameHeaders, uint64(len(e.buf)))
	return append(b, e.buf...)
}

// commonLower holds the lowercase forms of common header names, so that
// encoding them does not allocate.
var commonLower = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{
		"Accept", "Accept-Charset", "Accept-Encoding", "Accept-Language", "Accept-Ranges",
		"Age", "Access-Control-Allow-Origin", "Allow", "Alt-Svc", "Authorization", "Cache-Control",
		"Content-Disposition", "Content-Encoding", "Content-Language", "Content-Length",
		"Content-Location", "Content-Range", "Content-Type", "Cookie", "Date", "Etag", "Expect",
		"Expires", "From", "Host", "If-Match", "If-Modified-Since", "If-None-Match",
		"If-Unmodified-Since", "Last-Modified", "Link", "Location", "Max-Forwards", "Origin",
		"Proxy-Authenticate", "Proxy-Authorization", "Range", "Referer", "Refresh", "Retry-After",
		"Server", "Set-Cookie", "Strict-Transport-Security", "Te", "Trailer", "User-Agent", "Vary",
		"Via", "Www-Authenticate", "X-Content-Type-Options",
	} {
		m[k] = strings.ToLower(k)
	}
	return m
}()

func lowerHeader(k string) string {
	if l, ok := commonLower[k]; ok {
		return l
	}
	return strings.ToLower(k)
}
