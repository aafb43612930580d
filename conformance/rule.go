package conformance

import (
	"fmt"
	"time"

	"kquic.dev/internal/quicpeer"
	"kquic.dev/internal/quicwire"
)

// Role is the role of the implementation under test.
type Role string

// Roles.
const (
	Server Role = "server"
	Client Role = "client"
)

// Level is the requirement's strength in the RFC.
type Level string

// Levels.
const (
	Must   Level = "MUST"
	Should Level = "SHOULD"
	May    Level = "MAY"
)

// Rule is one requirement and how to break it.
type Rule struct {
	// Name is short and unique ("stream-on-send-only").
	Name string
	// Section of RFC 9000 ("19.8"), or another RFC's ("RFC 9221 4").
	Section string
	Level   Level
	// Text says what the peer does and what the RFC requires.
	Text string
	// Roles the rule tests the target in; nil: both.
	Roles []Role
	// Config breaks the rule during the handshake (transport parameters,
	// frames in handshake packets); nil for none.
	Config func(cfg *quicpeer.Config, s Side)
	// Send breaks it after the handshake; nil for none.
	Send func(s *Session) error
	// Want is the error code the RFC requires, then any it allows instead.
	Want []quicwire.TransportError
}

// AppliesTo reports whether the rule tests a target in role r.
func (r *Rule) AppliesTo(role Role) bool {
	if r.Roles == nil {
		return true
	}
	for _, x := range r.Roles {
		if x == role {
			return true
		}
	}
	return false
}

// WantString is the answer the RFC requires, alternatives after "or".
func (r *Rule) WantString() string {
	s := ""
	for i, w := range r.Want {
		if i > 0 {
			s += " or "
		}
		s += w.String()
	}
	return s
}

// Side tells a rule which role the target plays.
type Side struct{ Target Role }

// Ours is stream n of the kind this end (the hostile peer) initiates.
func (s Side) Ours(uni bool, n uint64) uint64 { return streamID(s.Target != Client, uni, n) }

// Theirs is stream n of the kind the target initiates.
func (s Side) Theirs(uni bool, n uint64) uint64 { return streamID(s.Target == Client, uni, n) }

func streamID(client, uni bool, n uint64) uint64 {
	id := n * 4
	if !client {
		id |= 1
	}
	if uni {
		id |= 2
	}
	return id
}

// Session is the hostile end of one connection, given to Rule.Send.
type Session struct {
	*quicpeer.Conn
	Side
}

// Param is the target's transport parameter id as a varint, def if absent.
func (s *Session) Param(id, def uint64) uint64 {
	v, err := s.PeerParams().Varint(id, def)
	if err != nil {
		return def
	}
	return v
}

// peerSent is the largest 1-RTT packet number the peer sent, waiting up to
// 5 s for its first (a client's kernel may not have sent one yet).
func (s *Session) peerSent() (uint64, error) {
	if s.Largest(quicwire.OneRTT) < 0 {
		s.Poll(5*time.Second, func(p quicpeer.Packet) bool { return p.Type == quicwire.OneRTT })
	}
	if l := s.Largest(quicwire.OneRTT); l >= 0 {
		return uint64(l), nil
	}
	return 0, fmt.Errorf("the peer sent no 1-RTT packet within 5 s of the handshake")
}

// Send1RTT sends frames in one 1-RTT packet.
func (s *Session) Send1RTT(frames ...quicwire.Frame) error {
	return s.Send(quicwire.OneRTT, frames...)
}

// Answer is what a target did after a violation.
type Answer struct {
	// Closed: a CONNECTION_CLOSE came (Code, Frame, App and Reason are
	// its fields).
	Closed bool   `json:"closed"`
	Code   uint64 `json:"code,omitempty"`
	Frame  uint64 `json:"frame,omitempty"`
	App    bool   `json:"app,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Other frames of note that came instead (RESET_STREAM, STOP_SENDING).
	Other []string `json:"other,omitempty"`
	// Error is set when the run itself failed (no handshake, say).
	Error string `json:"error,omitempty"`
}

// String is the answer as the table shows it.
func (a Answer) String() string {
	switch {
	case a.Error != "":
		return "error: " + a.Error
	case a.Closed && a.App:
		return fmt.Sprintf("application error 0x%x", a.Code)
	case a.Closed:
		s := quicwire.TransportError(a.Code).String()
		if a.Frame != 0 {
			s += " (" + quicwire.FrameName(a.Frame) + ")"
		}
		return s
	case len(a.Other) > 0:
		return "no close; " + fmt.Sprint(a.Other)
	}
	return "nothing"
}
