package http3

import (
	"fmt"

	"github.com/quic-go/quic-go/quicvarint"
)

// The settings of RFC 9114 §7.2.4.1 and RFC 9204 §5.
const (
	settingQPACKMaxTableCapacity = 0x01
	settingMaxFieldSectionSize   = 0x06
	settingQPACKBlockedStreams   = 0x07
)

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
// set), and one reserved setting (RFC 9114 §7.2.4.1) so that peers keep
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
