package http3

import (
	"net/http"

	"kquic.dev/quicnet"
)

// earlyRequest is a request whose header goes with the dial of a new
// connection ([quicnet.DialEarly]): in 0-RTT packets, with the
// ClientHello, when the session cache holds a ticket of the server that
// allows it.
type earlyRequest struct {
	frame []byte          // the request's HEADERS frame
	str   *quicnet.Stream // the stream DialEarly returned
}

// earlyRequestFor returns req's early header, or nil when req is to wait
// for the handshake: 0-RTT is off (Disable0RTT), there is no session
// cache to resume from (a Dial without a DialEarly and a cache is init's
// error), the method is not
// safe (RFC 9110 §9.2.1: GET, HEAD, OPTIONS, TRACE; RFC 8470 §4 lets a
// client send those early), the request has a body, or its field section
// is larger than a server is sure to take before its SETTINGS arrive.
func (t *Transport) earlyRequestFor(req *http.Request) *earlyRequest {
	if t.Disable0RTT || t.TLSClientConfig == nil || t.TLSClientConfig.ClientSessionCache == nil {
		return nil
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
	default:
		return nil
	}
	if req.Body != nil && req.Body != http.NoBody {
		return nil
	}
	rs := &clientStream{req: req}
	var e encoder
	e.reset()
	if err := rs.encodeHeader(&e, wantGzip(t, req), false); err != nil || e.size > waitSettingsAbove {
		return nil // the ordinary path reports the error, or waits for SETTINGS
	}
	return &earlyRequest{frame: e.frame(nil)}
}
