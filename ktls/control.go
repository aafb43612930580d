//go:build linux

package ktls

import (
	"fmt"
	"io"
)

// Handshake message types that may follow the handshake.
const (
	hsHelloRequest       = 0
	hsNewSessionTicket   = 4
	hsCertificateRequest = 13
	hsKeyUpdate          = 24
)

// maxPostHandshakeMsg bounds a post-handshake message we are willing to
// buffer (a NewSessionTicket with a large ticket is a few KiB).
const maxPostHandshakeMsg = 1 << 16

// ctrlEvent is one complete thing decoded from non-application-data records.
type ctrlEvent struct {
	alert  bool
	level  uint8 // alert
	desc   uint8 // alert
	hsType uint8 // handshake message
	hsBody []byte
}

// ctrlParser reassembles the plaintext of control records that the kernel
// returns through recvmsg with a TLS_GET_RECORD_TYPE cmsg. Handshake
// messages may span records, and one record may hold several; an alert is
// exactly two bytes. Nothing here trusts the peer's lengths beyond
// maxPostHandshakeMsg.
type ctrlParser struct {
	hs    []byte
	alert []byte
}

// feed takes the plaintext of (part of) one record of type typ and returns
// the complete events it finishes.
func (p *ctrlParser) feed(typ byte, data []byte) ([]ctrlEvent, error) {
	switch typ {
	case recordAlert:
		if len(p.hs) > 0 {
			return nil, fmt.Errorf("%w: alert record inside a fragmented handshake message", ErrUnexpectedMessage)
		}
		p.alert = append(p.alert, data...)
		var evs []ctrlEvent
		for len(p.alert) >= 2 {
			evs = append(evs, ctrlEvent{alert: true, level: p.alert[0], desc: p.alert[1]})
			p.alert = p.alert[2:]
		}
		return evs, nil
	case recordHandshake:
		if len(p.alert) > 0 {
			return nil, fmt.Errorf("%w: handshake record inside a fragmented alert", ErrUnexpectedMessage)
		}
		p.hs = append(p.hs, data...)
		var evs []ctrlEvent
		for len(p.hs) >= 4 {
			n := int(p.hs[1])<<16 | int(p.hs[2])<<8 | int(p.hs[3])
			if n > maxPostHandshakeMsg {
				return nil, fmt.Errorf("%w: handshake message type %d of %d bytes is too large", ErrUnexpectedMessage, p.hs[0], n)
			}
			if len(p.hs) < 4+n {
				break
			}
			evs = append(evs, ctrlEvent{hsType: p.hs[0], hsBody: append([]byte(nil), p.hs[4:4+n]...)})
			p.hs = p.hs[4+n:]
		}
		if len(p.hs) == 0 {
			p.hs = nil
		}
		return evs, nil
	case recordChangeCipherSpec:
		return nil, fmt.Errorf("%w: ChangeCipherSpec record (renegotiation is not supported)", ErrUnexpectedMessage)
	default:
		return nil, fmt.Errorf("%w: record of content type %d", ErrUnexpectedMessage, typ)
	}
}

// pending reports whether a message is partly received (so an EOF now is a
// truncation).
func (p *ctrlParser) pending() bool { return len(p.hs) > 0 || len(p.alert) > 0 }

// alertErr maps an alert to what Read returns: io.EOF for close_notify,
// *AlertError otherwise.
func alertErr(level, desc uint8) error {
	if desc == 0 { // close_notify
		return io.EOF
	}
	if level == 1 && desc == 90 { // user_canceled warning: ignore, close_notify follows
		return nil
	}
	return &AlertError{Level: level, Description: desc}
}

// parseKeyUpdate returns KeyUpdate.request_update.
func parseKeyUpdate(body []byte) (requested bool, err error) {
	if len(body) != 1 || body[0] > 1 {
		return false, fmt.Errorf("%w: malformed KeyUpdate (% x)", ErrUnexpectedMessage, body)
	}
	return body[0] == 1, nil
}
