package handshake

import (
	"crypto/tls"
	"errors"

	"kquic.dev/internal/quicabi"
)

// tpExtraPrefix marks the server's transport parameters (struct
// quic_transport_param) in a client's tls.SessionState.Extra.
const tpExtraPrefix = "kquic.dev/tp1:"

// prepareEarly decides on 0-RTT for a session crypto/tls is about to resume:
// it needs a caller with data to send and the server's transport parameters
// from the session's first connection, which the kernel must have before the
// early key (RFC 9000 §7.4.1: 0-RTT uses the remembered limits).
func (s *Session) prepareEarly(st *tls.SessionState) {
	if st == nil || !st.EarlyData {
		return
	}
	st.EarlyData = false
	if s.early == nil {
		return
	}
	for _, e := range st.Extra {
		if len(e) != len(tpExtraPrefix)+quicabi.SizeofTransportParam || string(e[:len(tpExtraPrefix)]) != tpExtraPrefix {
			continue
		}
		tp, err := quicabi.UnmarshalTransportParam(e[len(tpExtraPrefix):])
		if err != nil {
			return
		}
		tp.Remote = true
		if err := s.sock.SetOption(quicabi.QUIC_SOCKOPT_TRANSPORT_PARAM, tp.Marshal()); err != nil {
			return // no 0-RTT; the handshake goes on
		}
		st.EarlyData = true
		return
	}
}

// storeSession saves a session with the server's transport parameters,
// for 0-RTT on a later connection.
func (s *Session) storeSession(st *tls.SessionState) error {
	b, err := s.sock.GetOption(quicabi.QUIC_SOCKOPT_TRANSPORT_PARAM, quicabi.TransportParam{Remote: true}.Marshal())
	if err == nil && len(b) == quicabi.SizeofTransportParam {
		extra := st.Extra[:0:0]
		for _, e := range st.Extra {
			if len(e) < len(tpExtraPrefix) || string(e[:len(tpExtraPrefix)]) != tpExtraPrefix {
				extra = append(extra, e)
			}
		}
		st.Extra = append(extra, append([]byte(tpExtraPrefix), b...))
	}
	if err := s.q.StoreSession(st); err != nil {
		return &Error{"store the session", err}
	}
	return nil
}

// EarlyDataAccepted reports whether 0-RTT was used: on a client, that it
// sent 0-RTT data (see [ClientEarly]) and the server accepted it; on a
// server, that it accepted the client's 0-RTT data (the kernel delivers that
// data once the handshake has completed).
func (s *Session) EarlyDataAccepted() bool { return s.usedEarly && !s.RejectedEarlyData }

// HandleTicket gives the client a NewSessionTicket message that the kernel
// received after the handshake (event NEW_SESSION_TICKET, or
// getsockopt(SESSION_TICKET)), so crypto/tls stores the session in the
// tls.Config's ClientSessionCache.
func (s *Session) HandleTicket(nst []byte) error {
	if !s.client {
		return errors.New("handshake: HandleTicket is for clients")
	}
	if err := s.q.HandleData(tls.QUICEncryptionLevelApplication, nst); err != nil {
		return &Error{"process session ticket", err}
	}
	var err error
	for ev := s.q.NextEvent(); ev.Kind != tls.QUICNoEvent; ev = s.q.NextEvent() {
		if ev.Kind == tls.QUICStoreSession && err == nil {
			err = s.storeSession(ev.SessionState)
		}
	}
	return err
}

// SendSessionTicket makes the server send a NewSessionTicket (at the
// application level), allowing 0-RTT on resumption if earlyData is set.
func (s *Session) SendSessionTicket(earlyData bool) error {
	if s.client {
		return errors.New("handshake: SendSessionTicket is for servers")
	}
	if err := s.q.SendSessionTicket(tls.QUICSessionTicketOptions{EarlyData: earlyData}); err != nil {
		return &Error{"make session ticket", err}
	}
	for ev := s.q.NextEvent(); ev.Kind != tls.QUICNoEvent; ev = s.q.NextEvent() {
		if ev.Kind == tls.QUICWriteData {
			if err := s.send(ev.Level, ev.Data); err != nil {
				return err
			}
		}
	}
	return nil
}
