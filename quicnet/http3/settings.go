package http3

import (
	"fmt"

	"github.com/quic-go/quic-go/quicvarint"
)

// The settings of RFC 9114 §7.2.4.1, RFC 9204 §5, RFC 9220 §3 and RFC 9297
// §2.1.1.
const (
	settingQPACKMaxTableCapacity = 0x01
	settingMaxFieldSectionSize   = 0x06
	settingQPACKBlockedStreams   = 0x07
	settingExtendedConnect       = 0x08
	settingH3Datagram            = 0x33
)

// Settings are the HTTP/3 settings a peer sent in its SETTINGS frame, as
// quic-go's http3.Settings.
type Settings struct {
	// EnableDatagrams says the peer takes HTTP datagrams (RFC 9297:
	// SETTINGS_H3_DATAGRAM 1).
	EnableDatagrams bool
	// EnableExtendedConnect says the peer takes extended CONNECT (RFC
	// 9220: SETTINGS_ENABLE_CONNECT_PROTOCOL 1).
	EnableExtendedConnect bool
	// Other holds the settings this package does not act on: the peer's
	// AdditionalSettings, and the rest but SETTINGS_MAX_FIELD_SECTION_SIZE
	// and QPACK's.
	Other map[uint64]uint64
}

// Settingser gives the peer's settings of a request's connection, as
// quic-go's http3.Settingser: a handler's request Body and ResponseWriter
// implement it.
type Settingser interface {
	// ReceivedSettings returns a channel closed once the peer's SETTINGS
	// frame has arrived.
	ReceivedSettings() <-chan struct{}
	// Settings returns the peer's settings, once ReceivedSettings is
	// closed (nil before).
	Settings() *Settings
}

// checkAdditionalSettings refuses what AdditionalSettings may not hold:
// the settings RFC 9114, RFC 9204, RFC 9220 and RFC 9297 define (this
// package sends those itself, from its own fields) and the HTTP/2 ones
// RFC 9114 reserves.
func checkAdditionalSettings(field string, m map[uint64]uint64) error {
	for id := range m {
		var what string
		switch {
		case id == 0 || isHTTP2Setting(id):
			what = "reserved by RFC 9114 §7.2.4.1"
		case id == settingQPACKMaxTableCapacity, id == settingQPACKBlockedStreams:
			what = "QPACK's (RFC 9204), set by this package"
		case id == settingMaxFieldSectionSize:
			what = "SETTINGS_MAX_FIELD_SECTION_SIZE: set MaxHeaderBytes (server) or MaxResponseHeaderBytes (client)"
		case id == settingExtendedConnect:
			what = "SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 9220): this package does not do extended CONNECT"
		case id == settingH3Datagram:
			what = "SETTINGS_H3_DATAGRAM (RFC 9297): set EnableDatagrams"
		default:
			continue
		}
		return fmt.Errorf("http3: %s holds setting %#x, %s", field, id, what)
	}
	return nil
}

// isHTTP2Setting reports setting identifiers HTTP/2 has and HTTP/3
// reserves: receiving one is H3_SETTINGS_ERROR (RFC 9114 §7.2.4.1).
func isHTTP2Setting(id uint64) bool { return id >= 0x02 && id <= 0x05 }

// settings are the parameters a side declares in its SETTINGS frame.
type settings struct {
	// MaxFieldSectionSize is the largest field section (RFC 9114 §4.2.2:
	// names and values plus 32 bytes a field) the side takes; 0 is no
	// limit.
	MaxFieldSectionSize uint64
	// QPACKMaxTableCapacity and QPACKBlockedStreams are QPACK's; this
	// package sends 0 for both (no dynamic table).
	QPACKMaxTableCapacity uint64
	QPACKBlockedStreams   uint64
	// Datagram is SETTINGS_H3_DATAGRAM (RFC 9297), ExtendedConnect
	// SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 9220); both take 0 or 1 only.
	Datagram, ExtendedConnect bool
	// Other holds the settings this package does not know; they are
	// ignored, as RFC 9114 §7.2.4 says.
	Other map[uint64]uint64
}

// parseSettings parses a SETTINGS frame's payload.
func parseSettings(p []byte) (settings, error) {
	var s settings
	seen := map[uint64]bool{}
	for len(p) > 0 {
		id, n, err := quicvarint.Parse(p)
		if err != nil {
			return s, &connError{Code: ErrCodeFrameError, Msg: "SETTINGS frame: truncated identifier"}
		}
		p = p[n:]
		val, n, err := quicvarint.Parse(p)
		if err != nil {
			return s, &connError{Code: ErrCodeFrameError, Msg: fmt.Sprintf("SETTINGS frame: truncated value of setting %#x", id)}
		}
		p = p[n:]
		if seen[id] {
			return s, &connError{Code: ErrCodeSettingsError, Msg: fmt.Sprintf("SETTINGS frame: setting %#x twice", id)}
		}
		seen[id] = true
		switch {
		case isHTTP2Setting(id):
			return s, &connError{Code: ErrCodeSettingsError, Msg: fmt.Sprintf("SETTINGS frame: HTTP/2 setting %#x", id)}
		case id == settingMaxFieldSectionSize:
			s.MaxFieldSectionSize = val
		case id == settingQPACKMaxTableCapacity:
			s.QPACKMaxTableCapacity = val
		case id == settingQPACKBlockedStreams:
			s.QPACKBlockedStreams = val
		case id == settingH3Datagram, id == settingExtendedConnect:
			if val > 1 {
				return s, &connError{Code: ErrCodeSettingsError, Msg: fmt.Sprintf("SETTINGS frame: setting %#x is %d, not 0 or 1", id, val)}
			}
			if id == settingH3Datagram {
				s.Datagram = val == 1
			} else {
				s.ExtendedConnect = val == 1
			}
		default:
			if s.Other == nil {
				s.Other = map[uint64]uint64{}
			}
			s.Other[id] = val
		}
	}
	return s, nil
}

// appendSettings appends a SETTINGS frame: the field section limit (when
// set), QPACK's and the datagram setting when set, s.Other, and one reserved setting (RFC 9114 §7.2.4.1) so that peers keep
// ignoring unknown ones.
func appendSettings(b []byte, s settings) []byte {
	var p []byte
	if s.MaxFieldSectionSize > 0 {
		p = quicvarint.Append(p, settingMaxFieldSectionSize)
		p = quicvarint.Append(p, s.MaxFieldSectionSize)
	}
	if s.QPACKMaxTableCapacity > 0 {
		p = quicvarint.Append(p, settingQPACKMaxTableCapacity)
		p = quicvarint.Append(p, s.QPACKMaxTableCapacity)
	}
	if s.QPACKBlockedStreams > 0 {
		p = quicvarint.Append(p, settingQPACKBlockedStreams)
		p = quicvarint.Append(p, s.QPACKBlockedStreams)
	}
	if s.Datagram {
		p = quicvarint.Append(p, settingH3Datagram)
		p = quicvarint.Append(p, 1)
	}
	if s.ExtendedConnect {
		p = quicvarint.Append(p, settingExtendedConnect)
		p = quicvarint.Append(p, 1)
	}
	for id, v := range s.Other {
		p = quicvarint.Append(p, id)
		p = quicvarint.Append(p, v)
	}
	if _, ok := s.Other[reservedSetting]; !ok {
		p = quicvarint.Append(p, reservedSetting)
		p = quicvarint.Append(p, 0)
	}
	b = appendFrameHeader(b, frameSettings, uint64(len(p)))
	return append(b, p...)
}

// reservedSetting is a grease identifier of the form 0x1f*N+0x21.
const reservedSetting = 0x1f*7 + 0x21
