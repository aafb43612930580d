package http3

// Alt-Svc: announcing an HTTP/3 server from the responses of a TCP one.

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrNoAltSvcPort is SetQUICHeaders' error when it has no port to
// announce: set Server.Port or Addr, or serve first.
var ErrNoAltSvcPort = errors.New("http3: no port for Alt-Svc: set Server.Port or Addr, or serve first")

// SetQUICHeaders adds the Alt-Svc field that announces this server's
// HTTP/3 port to h (for responses of an HTTP/1.1 or HTTP/2 server beside
// it): Port, else the ports of the listeners it serves, else the port of
// Addr.
func (s *Server) SetQUICHeaders(h http.Header) error {
	var ports []int
	if s.Port != 0 {
		ports = append(ports, s.Port)
	} else {
		s.mu.Lock()
		for e := range s.listeners {
			if ua, ok := e.ln.Addr().(*net.UDPAddr); ok && ua.Port != 0 && !slices.Contains(ports, ua.Port) {
				ports = append(ports, ua.Port)
			}
		}
		s.mu.Unlock()
		slices.Sort(ports)
	}
	if len(ports) == 0 && s.Addr != "" {
		_, p, err := net.SplitHostPort(s.Addr)
		if err != nil {
			return fmt.Errorf("%w (Server.Addr %q: %v)", ErrNoAltSvcPort, s.Addr, err)
		}
		port, err := net.LookupPort("udp", p)
		if err != nil {
			return fmt.Errorf("%w (Server.Addr %q: %v)", ErrNoAltSvcPort, s.Addr, err)
		}
		ports = append(ports, port)
	}
	if len(ports) == 0 {
		return ErrNoAltSvcPort
	}
	v := make([]string, len(ports))
	for i, p := range ports {
		v[i] = AltSvc(p, 0)
	}
	h["Alt-Svc"] = append(h["Alt-Svc"], strings.Join(v, ","))
	return nil
}

// DefaultAltSvcMaxAge is how long AltSvc tells clients to remember the
// HTTP/3 endpoint when given 0: 30 days, as nginx's and quic-go's.
const DefaultAltSvcMaxAge = 30 * 24 * time.Hour

// AltSvc returns the Alt-Svc field value that announces HTTP/3 on port of
// the same host (RFC 7838): `h3=":443"; ma=2592000`. maxAge 0 is
// DefaultAltSvcMaxAge.
func AltSvc(port int, maxAge time.Duration) string {
	if maxAge <= 0 {
		maxAge = DefaultAltSvcMaxAge
	}
	return `h3=":` + strconv.Itoa(port) + `"; ma=` + strconv.FormatInt(int64(maxAge/time.Second), 10)
}

// AltSvcHandler wraps the handler of an HTTP/1.1 or HTTP/2 (TCP) server so
// that its responses announce HTTP/3 on port, as an nginx with
// `add_header Alt-Svc` does: browsers then move to HTTP/3.
func AltSvcHandler(h http.Handler, port int) http.Handler {
	v := []string{AltSvc(port, 0)}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Alt-Svc"] = slices.Clone(v)
		h.ServeHTTP(w, r)
	})
}
