package tlsagent

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
)

// The session data a QUIC client consumer keeps between connections is the
// agent's own format (the kernel stores it without reading it): a magic, the
// ticket and crypto/tls's session state.
const (
	sessionMagic   = "kqa1"
	sessionMinLen  = 64   // QUIC_TICKET_MIN_LEN
	sessionMaxLen  = 4096 // QUIC_TICKET_MAX_LEN
	sessionHdrSize = len(sessionMagic) + 2
)

func encodeSession(cs *tls.ClientSessionState) ([]byte, error) {
	ticket, st, err := cs.ResumptionState()
	if err != nil {
		return nil, fmt.Errorf("session data: %w", err)
	}
	if st == nil {
		return nil, errors.New("session data: no session")
	}
	sb, err := st.Bytes()
	if err != nil {
		return nil, fmt.Errorf("session data: %w", err)
	}
	if len(ticket) > 0xffff {
		return nil, fmt.Errorf("session data: ticket of %d bytes", len(ticket))
	}
	b := make([]byte, 0, sessionHdrSize+len(ticket)+len(sb))
	b = append(b, sessionMagic...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(ticket)))
	b = append(b, ticket...)
	b = append(b, sb...)
	if len(b) > sessionMaxLen {
		return nil, fmt.Errorf("session data of %d bytes is more than the kernel keeps (%d): the server's certificate chain is too long to resume", len(b), sessionMaxLen)
	}
	if len(b) < sessionMinLen {
		return nil, fmt.Errorf("session data of %d bytes is less than the kernel takes (%d)", len(b), sessionMinLen)
	}
	return b, nil
}

func decodeSession(b []byte) (*tls.ClientSessionState, error) {
	if len(b) < sessionHdrSize || string(b[:len(sessionMagic)]) != sessionMagic {
		return nil, errors.New("session data is not this agent's (from another handshake agent?)")
	}
	n := int(binary.BigEndian.Uint16(b[len(sessionMagic):]))
	rest := b[sessionHdrSize:]
	if n > len(rest) {
		return nil, errors.New("session data truncated")
	}
	st, err := tls.ParseSessionState(rest[n:])
	if err != nil {
		return nil, fmt.Errorf("session data: %w", err)
	}
	return tls.NewResumptionState(append([]byte(nil), rest[:n]...), st)
}

// oneSession is the client session cache of one request: it offers the
// consumer's session, if any, and keeps what crypto/tls stores.
type oneSession struct {
	cs  *tls.ClientSessionState
	put *tls.ClientSessionState
}

func (o *oneSession) Get(string) (*tls.ClientSessionState, bool) { return o.cs, o.cs != nil }

func (o *oneSession) Put(_ string, cs *tls.ClientSessionState) {
	if cs == nil {
		o.cs = nil // crypto/tls drops a session that failed to resume
		return
	}
	o.put = cs
}
