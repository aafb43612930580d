package conformance

import (
	"errors"

	"kquic.dev/internal/quicpeer"
	"kquic.dev/internal/quicwire"
)

// ErrNotApplicable is returned by a rule's Send when the target's
// transport parameters make the rule moot (it supports the extension, its
// limits cannot be reached): the result says n/a.
var ErrNotApplicable = errors.New("conformance: the rule does not apply to this target")

type te = quicwire.TransportError

const (
	feErr  = quicwire.FrameEncodingError
	pvErr  = quicwire.ProtocolViolation
	ssErr  = quicwire.StreamStateError
	slErr  = quicwire.StreamLimitError
	fcErr  = quicwire.FlowControlError
	fsErr  = quicwire.FinalSizeError
	tpErr  = quicwire.TransportParameterError
	cidErr = quicwire.ConnectionIDLimitError
)

func want(codes ...te) []te { return codes }

// frames is a Send that sends fs in one 1-RTT packet.
func frames(fs func(s *Session) []quicwire.Frame) func(s *Session) error {
	return func(s *Session) error { return s.Send1RTT(fs(s)...) }
}

// inOrder is a Send that sends each group of frames in a packet of its own,
// in order.
func inOrder(groups func(s *Session) [][]quicwire.Frame) func(s *Session) error {
	return func(s *Session) error {
		for _, g := range groups(s) {
			if err := s.Send1RTT(g...); err != nil {
				return err
			}
		}
		return nil
	}
}

// params is a Config that sets transport parameters.
func params(ps ...quicwire.TransportParameter) func(*quicpeer.Config, Side) {
	return func(cfg *quicpeer.Config, _ Side) { cfg.Params = append(cfg.Params, ps...) }
}

// inHandshake is a Config that puts frames before this end's first
// handshake data in a packet of type t.
func inHandshake(t quicwire.PacketType, f func(Side) quicwire.Frame) func(*quicpeer.Config, Side) {
	return func(cfg *quicpeer.Config, s Side) {
		if cfg.HandshakeFrames == nil {
			cfg.HandshakeFrames = map[quicwire.PacketType][]quicwire.Frame{}
		}
		cfg.HandshakeFrames[t] = append(cfg.HandshakeFrames[t], f(s))
	}
}

func vp(id, v uint64) quicwire.TransportParameter { return quicwire.VarintParam(id, v) }

var eightBytes = []byte{1, 2, 3, 4, 5, 6, 7, 8}

// Rules is the table, in the RFC's order within each group.
var Rules = []Rule{
	// Frame encoding and packet rules.
	{Name: "unknown-frame-type", Section: "12.4", Level: Must, Want: want(feErr),
		Text: "a frame of an unknown type (0x21)",
		Send: frames(func(*Session) []quicwire.Frame { return []quicwire.Frame{quicwire.Raw{0x21}} })},
	{Name: "datagram-not-negotiated", Section: "RFC 9221 4", Level: Must, Want: want(pvErr),
		Text: "a DATAGRAM frame to a peer that did not advertise max_datagram_frame_size",
		Send: func(s *Session) error {
			if _, ok := s.PeerParams().Get(quicwire.ParamMaxDatagramFrameSize); ok {
				return ErrNotApplicable
			}
			return s.Send1RTT(quicwire.Datagram{Data: []byte("x")})
		}},
	{Name: "stream-truncated", Section: "12.4, 20.1", Level: Must, Want: want(feErr),
		Text: "a STREAM frame whose Length runs past the packet",
		Send: frames(func(s *Session) []quicwire.Frame {
			b := quicwire.AppendVarint([]byte{quicwire.TypeStream | 0x02}, s.Ours(false, 0))
			return []quicwire.Frame{quicwire.Raw(append(quicwire.AppendVarint(b, 100), "abc"...))}
		})},
	{Name: "ack-truncated", Section: "12.4, 20.1", Level: Must, Want: want(feErr),
		Text: "an ACK frame cut after its Largest Acknowledged",
		Send: frames(func(*Session) []quicwire.Frame { return []quicwire.Frame{quicwire.Raw{quicwire.TypeAck, 0x01}} })},
	{Name: "ack-range-below-zero", Section: "19.3.1", Level: Must, Want: want(feErr),
		Text: "an ACK of packets the peer sent whose first range reaches one below packet number 0",
		Send: func(s *Session) error {
			// Acknowledge a packet number the peer did send, so that the
			// range, not an unsent packet, is what is wrong.
			largest, err := s.peerSent()
			if err != nil {
				return err
			}
			return s.Send1RTT(&quicwire.Ack{Largest: largest, FirstRange: largest + 1})
		}},
	{Name: "ack-unsent-packet", Section: "13.1", Level: Should, Want: want(pvErr),
		Text: "an ACK of a packet number the peer never sent (2^30)",
		Send: frames(func(*Session) []quicwire.Frame {
			return []quicwire.Frame{quicwire.NewAck(0, quicwire.PNRange{Smallest: 1 << 30, Largest: 1 << 30})}
		})},
	{Name: "packet-without-frames", Section: "12.4", Level: Must, Want: want(pvErr),
		Text: "a 1-RTT packet with no frames",
		Send: func(s *Session) error { return s.Send1RTT() }},
	{Name: "reserved-bits-set", Section: "17.3.1", Level: Must, Want: want(pvErr),
		Text: "a 1-RTT packet with its reserved bits set (after header protection is removed)",
		Send: func(s *Session) error {
			return s.SendHeader(quicwire.OneRTT, func(h *quicwire.Header) { h.Reserved = 3 }, quicwire.Ping{})
		}},

	// Frames in packets that may not carry them.
	{Name: "stream-in-initial", Section: "12.4", Level: Must, Want: want(pvErr),
		Text: "a STREAM frame in an Initial packet, beside the handshake's first CRYPTO data",
		Config: inHandshake(quicwire.Initial, func(s Side) quicwire.Frame {
			return quicwire.Stream{StreamID: s.Ours(false, 0), Data: []byte("x")}
		})},
	{Name: "max-data-in-initial", Section: "12.4", Level: Must, Want: want(pvErr),
		Text:   "a MAX_DATA frame in an Initial packet",
		Config: inHandshake(quicwire.Initial, func(Side) quicwire.Frame { return quicwire.MaxData{Max: 1 << 20} })},
	{Name: "stream-in-handshake", Section: "12.4", Level: Must, Want: want(pvErr),
		Text: "a STREAM frame in a Handshake packet",
		Config: inHandshake(quicwire.Handshake, func(s Side) quicwire.Frame {
			return quicwire.Stream{StreamID: s.Ours(false, 0), Data: []byte("x")}
		})},
	{Name: "new-connection-id-in-handshake", Section: "12.4", Level: Must, Want: want(pvErr),
		Text: "a NEW_CONNECTION_ID frame in a Handshake packet",
		Config: inHandshake(quicwire.Handshake, func(Side) quicwire.Frame {
			return quicwire.NewConnectionID{Seq: 1, ConnID: eightBytes}
		})},
	{Name: "handshake-done-in-handshake", Section: "12.4", Level: Must, Want: want(pvErr),
		Text:   "a HANDSHAKE_DONE frame in a Handshake packet",
		Config: inHandshake(quicwire.Handshake, func(Side) quicwire.Frame { return quicwire.HandshakeDone{} })},

	// Connection IDs.
	{Name: "new-connection-id-empty", Section: "19.15", Level: Must, Want: want(feErr),
		Text: "NEW_CONNECTION_ID with a zero-length connection ID",
		Send: frames(func(*Session) []quicwire.Frame { return []quicwire.Frame{quicwire.NewConnectionID{Seq: 1}} })},
	{Name: "new-connection-id-too-long", Section: "19.15", Level: Must, Want: want(feErr),
		Text: "NEW_CONNECTION_ID with a 21-byte connection ID",
		Send: frames(func(*Session) []quicwire.Frame {
			return []quicwire.Frame{quicwire.NewConnectionID{Seq: 1, ConnID: make([]byte, 21)}}
		})},
	{Name: "new-connection-id-retire-prior-to", Section: "19.15", Level: Must, Want: want(feErr),
		Text: "NEW_CONNECTION_ID whose Retire Prior To (2) exceeds its Sequence Number (1)",
		Send: frames(func(*Session) []quicwire.Frame {
			return []quicwire.Frame{quicwire.NewConnectionID{Seq: 1, RetirePriorTo: 2, ConnID: eightBytes}}
		})},
	{Name: "connection-id-limit", Section: "5.1.1", Level: Must, Want: want(cidErr),
		Text: "more connection IDs than the peer's active_connection_id_limit",
		Send: frames(func(s *Session) []quicwire.Frame {
			limit := s.Param(quicwire.ParamActiveConnectionIDLimit, 2)
			var fs []quicwire.Frame
			for seq := uint64(1); seq <= min(limit, 64); seq++ {
				fs = append(fs, quicwire.NewConnectionID{Seq: seq, ConnID: []byte{byte(seq), 2, 3, 4, 5, 6, 7, 8}, ResetToken: [16]byte{byte(seq)}})
			}
			return fs
		})},
	{Name: "retire-connection-id-unissued", Section: "19.16", Level: Must, Want: want(pvErr),
		Text: "RETIRE_CONNECTION_ID of a sequence number never issued (1000)",
		Send: frames(func(*Session) []quicwire.Frame { return []quicwire.Frame{quicwire.RetireConnectionID{Seq: 1000}} })},
	{Name: "retire-connection-id-in-use", Section: "19.16", Level: May, Want: want(pvErr),
		Text: "RETIRE_CONNECTION_ID of the connection ID the packet is sent to",
		Send: frames(func(*Session) []quicwire.Frame { return []quicwire.Frame{quicwire.RetireConnectionID{Seq: 0}} })},
	{Name: "path-response-unsolicited", Section: "19.18", Level: May, Want: want(pvErr),
		Text: "a PATH_RESPONSE that matches no PATH_CHALLENGE",
		Send: frames(func(*Session) []quicwire.Frame {
			return []quicwire.Frame{quicwire.PathResponse{Data: [8]byte(eightBytes)}}
		})},

	// Frames only one role may send.
	{Name: "handshake-done-from-client", Section: "19.20", Level: Must, Want: want(pvErr), Roles: []Role{Server},
		Text: "a client sends HANDSHAKE_DONE",
		Send: frames(func(*Session) []quicwire.Frame { return []quicwire.Frame{quicwire.HandshakeDone{}} })},
	{Name: "new-token-from-client", Section: "19.7", Level: Must, Want: want(pvErr), Roles: []Role{Server},
		Text: "a client sends NEW_TOKEN",
		Send: frames(func(*Session) []quicwire.Frame { return []quicwire.Frame{quicwire.NewToken{Token: []byte("t")}} })},
	{Name: "new-token-empty", Section: "19.7", Level: Must, Want: want(feErr), Roles: []Role{Client},
		Text: "a server sends NEW_TOKEN with an empty token",
		Send: frames(func(*Session) []quicwire.Frame { return []quicwire.Frame{quicwire.NewToken{}} })},

	// Stream states.
	{Name: "stream-on-send-only", Section: "19.8", Level: Must, Want: want(ssErr),
		Text: "STREAM on a unidirectional stream the receiver initiates (its send-only stream)",
		Send: frames(func(s *Session) []quicwire.Frame {
			return []quicwire.Frame{quicwire.Stream{StreamID: s.Theirs(true, 0), Data: []byte("x")}}
		})},
	{Name: "stream-not-yet-created", Section: "19.8", Level: Must, Want: want(ssErr),
		Text: "STREAM on a bidirectional stream the receiver initiates but has not opened",
		Send: frames(func(s *Session) []quicwire.Frame {
			return []quicwire.Frame{quicwire.Stream{StreamID: s.Theirs(false, 0), Data: []byte("x")}}
		})},
	{Name: "reset-stream-send-only", Section: "19.4", Level: Must, Want: want(ssErr),
		Text: "RESET_STREAM on the receiver's send-only stream",
		Send: frames(func(s *Session) []quicwire.Frame {
			return []quicwire.Frame{quicwire.ResetStream{StreamID: s.Theirs(true, 0)}}
		})},
	{Name: "stop-sending-receive-only", Section: "19.5", Level: Must, Want: want(ssErr),
		Text: "STOP_SENDING on a unidirectional stream the sender opened (the receiver's receive-only stream)",
		Send: inOrder(func(s *Session) [][]quicwire.Frame {
			id := s.Ours(true, 0)
			return [][]quicwire.Frame{{quicwire.Stream{StreamID: id, Data: []byte("x")}}, {quicwire.StopSending{StreamID: id}}}
		})},
	{Name: "stop-sending-not-yet-created", Section: "19.5", Level: Must, Want: want(ssErr),
		Text: "STOP_SENDING on a stream the receiver initiates but has not opened",
		Send: frames(func(s *Session) []quicwire.Frame {
			return []quicwire.Frame{quicwire.StopSending{StreamID: s.Theirs(false, 0)}}
		})},
	{Name: "max-stream-data-receive-only", Section: "19.10", Level: Must, Want: want(ssErr),
		Text: "MAX_STREAM_DATA on the receiver's receive-only stream",
		Send: inOrder(func(s *Session) [][]quicwire.Frame {
			id := s.Ours(true, 0)
			return [][]quicwire.Frame{{quicwire.Stream{StreamID: id, Data: []byte("x")}}, {quicwire.MaxStreamData{StreamID: id, Max: 1 << 20}}}
		})},
	{Name: "max-stream-data-not-yet-created", Section: "19.10", Level: Must, Want: want(ssErr),
		Text: "MAX_STREAM_DATA on a stream the receiver initiates but has not opened",
		Send: frames(func(s *Session) []quicwire.Frame {
			return []quicwire.Frame{quicwire.MaxStreamData{StreamID: s.Theirs(false, 0), Max: 1 << 20}}
		})},
	{Name: "stream-data-blocked-send-only", Section: "19.13", Level: Must, Want: want(ssErr),
		Text: "STREAM_DATA_BLOCKED on the receiver's send-only stream",
		Send: frames(func(s *Session) []quicwire.Frame {
			return []quicwire.Frame{quicwire.StreamDataBlocked{StreamID: s.Theirs(true, 0)}}
		})},

	// Stream limits.
	{Name: "bidi-stream-over-limit", Section: "4.6", Level: Must, Want: want(slErr),
		Text: "STREAM on the first bidirectional stream past initial_max_streams_bidi",
		Send: func(s *Session) error {
			n := s.Param(quicwire.ParamInitialMaxStreamsBidi, 0)
			return s.Send1RTT(quicwire.Stream{StreamID: s.Ours(false, n), Data: []byte("x")})
		}},
	{Name: "uni-stream-over-limit", Section: "4.6", Level: Must, Want: want(slErr),
		Text: "STREAM on the first unidirectional stream past initial_max_streams_uni",
		Send: func(s *Session) error {
			n := s.Param(quicwire.ParamInitialMaxStreamsUni, 0)
			return s.Send1RTT(quicwire.Stream{StreamID: s.Ours(true, n), Data: []byte("x")})
		}},
	{Name: "max-streams-bidi-over-2^60", Section: "19.11", Level: Must, Want: want(feErr),
		Text: "MAX_STREAMS (bidirectional) of 2^60+1",
		Send: frames(func(*Session) []quicwire.Frame { return []quicwire.Frame{quicwire.MaxStreams{Max: 1<<60 + 1}} })},
	{Name: "max-streams-uni-over-2^60", Section: "19.11", Level: Must, Want: want(feErr),
		Text: "MAX_STREAMS (unidirectional) of 2^60+1",
		Send: frames(func(*Session) []quicwire.Frame {
			return []quicwire.Frame{quicwire.MaxStreams{Uni: true, Max: 1<<60 + 1}}
		})},
	{Name: "streams-blocked-over-2^60", Section: "19.14", Level: Must, Want: want(slErr, feErr),
		Text: "STREAMS_BLOCKED of 2^60+1",
		Send: frames(func(*Session) []quicwire.Frame { return []quicwire.Frame{quicwire.StreamsBlocked{Limit: 1<<60 + 1}} })},

	// Flow control.
	{Name: "stream-data-over-limit", Section: "4.1", Level: Must, Want: want(fcErr),
		Text: "STREAM data past the receiver's initial_max_stream_data_bidi_remote",
		Send: func(s *Session) error {
			limit := s.Param(quicwire.ParamInitialMaxStreamDataBidiRemote, 0)
			return s.Send1RTT(quicwire.Stream{StreamID: s.Ours(false, 0), Offset: limit, Data: []byte("x")})
		}},
	{Name: "uni-stream-data-over-limit", Section: "4.1", Level: Must, Want: want(fcErr),
		Text: "STREAM data past the receiver's initial_max_stream_data_uni",
		Send: func(s *Session) error {
			limit := s.Param(quicwire.ParamInitialMaxStreamDataUni, 0)
			return s.Send1RTT(quicwire.Stream{StreamID: s.Ours(true, 0), Offset: limit, Data: []byte("x")})
		}},
	{Name: "data-over-connection-limit", Section: "4.1", Level: Must, Want: want(fcErr),
		Text: "STREAM data on several streams, each within its limit, past initial_max_data in all",
		Send: overConnectionLimit},
	{Name: "stream-offset-over-2^62", Section: "19.8", Level: Must, Want: want(feErr, fcErr),
		Text: "STREAM data whose offset plus length exceeds 2^62-1",
		Send: frames(func(s *Session) []quicwire.Frame {
			return []quicwire.Frame{quicwire.Stream{StreamID: s.Ours(false, 0), Offset: quicwire.MaxVarint, Data: []byte("xy")}}
		})},
	{Name: "crypto-buffer-exceeded", Section: "7.5", Level: Must, Want: want(quicwire.CryptoBufferExceeded),
		Text: "1-RTT CRYPTO data at offset 2^24, far past what any endpoint buffers",
		Send: frames(func(*Session) []quicwire.Frame {
			return []quicwire.Frame{quicwire.Crypto{Offset: 1 << 24, Data: []byte("x")}}
		})},

	// Final size.
	{Name: "final-size-changed", Section: "4.5", Level: Should, Want: want(fsErr),
		Text: "a second FIN at another final size (5, then 10)",
		Send: inOrder(func(s *Session) [][]quicwire.Frame {
			id := s.Ours(false, 0)
			return [][]quicwire.Frame{{quicwire.Stream{StreamID: id, Data: []byte("hello"), Fin: true}},
				{quicwire.Stream{StreamID: id, Offset: 5, Data: []byte("world"), Fin: true}}}
		})},
	{Name: "data-past-final-size", Section: "4.5", Level: Should, Want: want(fsErr),
		Text: "data at offset 10 after a FIN at 5",
		Send: inOrder(func(s *Session) [][]quicwire.Frame {
			id := s.Ours(false, 0)
			return [][]quicwire.Frame{{quicwire.Stream{StreamID: id, Data: []byte("hello"), Fin: true}},
				{quicwire.Stream{StreamID: id, Offset: 10, Data: []byte("x")}}}
		})},
	{Name: "final-size-below-received", Section: "4.5", Level: Should, Want: want(fsErr),
		Text: "a FIN at 5 after 10 bytes were received",
		Send: inOrder(func(s *Session) [][]quicwire.Frame {
			id := s.Ours(false, 0)
			return [][]quicwire.Frame{{quicwire.Stream{StreamID: id, Data: []byte("0123456789")}},
				{quicwire.Stream{StreamID: id, Data: []byte("01234"), Fin: true}}}
		})},
	{Name: "reset-final-size-changed", Section: "4.5", Level: Should, Want: want(fsErr),
		Text: "RESET_STREAM with final size 10 after a FIN at 5",
		Send: inOrder(func(s *Session) [][]quicwire.Frame {
			id := s.Ours(false, 0)
			return [][]quicwire.Frame{{quicwire.Stream{StreamID: id, Data: []byte("hello"), Fin: true}},
				{quicwire.ResetStream{StreamID: id, FinalSize: 10}}}
		})},
	{Name: "reset-final-size-below-received", Section: "4.5", Level: Should, Want: want(fsErr),
		Text: "RESET_STREAM with final size 5 after 10 bytes were received",
		Send: inOrder(func(s *Session) [][]quicwire.Frame {
			id := s.Ours(false, 0)
			return [][]quicwire.Frame{{quicwire.Stream{StreamID: id, Data: []byte("0123456789")}},
				{quicwire.ResetStream{StreamID: id, FinalSize: 5}}}
		})},

	// Transport parameters (§7.4: an invalid value is a
	// TRANSPORT_PARAMETER_ERROR).
	{Name: "tp-ack-delay-exponent-over-20", Section: "18.2", Level: Must, Want: want(tpErr),
		Text:   "ack_delay_exponent 21",
		Config: params(vp(quicwire.ParamAckDelayExponent, 21))},
	{Name: "tp-max-ack-delay-2^14", Section: "18.2", Level: Must, Want: want(tpErr),
		Text:   "max_ack_delay 2^14",
		Config: params(vp(quicwire.ParamMaxAckDelay, 1<<14))},
	{Name: "tp-max-udp-payload-below-1200", Section: "18.2", Level: Must, Want: want(tpErr),
		Text:   "max_udp_payload_size 1199",
		Config: params(vp(quicwire.ParamMaxUDPPayloadSize, 1199))},
	{Name: "tp-active-cid-limit-below-2", Section: "18.2", Level: Must, Want: want(tpErr),
		Text:   "active_connection_id_limit 1",
		Config: params(vp(quicwire.ParamActiveConnectionIDLimit, 1))},
	{Name: "tp-max-streams-bidi-over-2^60", Section: "4.6", Level: Must, Want: want(tpErr),
		Text:   "initial_max_streams_bidi 2^60+1",
		Config: params(vp(quicwire.ParamInitialMaxStreamsBidi, 1<<60+1))},
	{Name: "tp-max-streams-uni-over-2^60", Section: "4.6", Level: Must, Want: want(tpErr),
		Text:   "initial_max_streams_uni 2^60+1",
		Config: params(vp(quicwire.ParamInitialMaxStreamsUni, 1<<60+1))},
	{Name: "tp-value-not-a-varint", Section: "7.4", Level: Must, Want: want(tpErr),
		Text:   "max_idle_timeout of three bytes: a varint and one more",
		Config: params(quicwire.TransportParameter{ID: quicwire.ParamMaxIdleTimeout, Value: []byte{0x40, 0x10, 0x00}})},
	{Name: "tp-duplicate", Section: "7.4", Level: Should, Want: want(tpErr),
		Text: "initial_max_data twice",
		Config: func(cfg *quicpeer.Config, _ Side) {
			cfg.AppendParams = append(cfg.AppendParams, vp(quicwire.ParamInitialMaxData, 1000))
		}},
	{Name: "tp-no-initial-source-cid", Section: "7.3", Level: Must, Want: want(tpErr, pvErr),
		Text: "no initial_source_connection_id",
		Config: func(cfg *quicpeer.Config, _ Side) {
			cfg.Omit = append(cfg.Omit, quicwire.ParamInitialSourceConnectionID)
		}},
	{Name: "tp-wrong-initial-source-cid", Section: "7.3", Level: Must, Want: want(tpErr, pvErr),
		Text:   "initial_source_connection_id unlike the Source Connection ID of the sender's Initial",
		Config: params(quicwire.TransportParameter{ID: quicwire.ParamInitialSourceConnectionID, Value: []byte{0xde, 0xad}})},
	{Name: "tp-client-original-dcid", Section: "18.2", Level: Must, Want: want(tpErr), Roles: []Role{Server},
		Text:   "a client sends original_destination_connection_id",
		Config: params(quicwire.TransportParameter{ID: quicwire.ParamOriginalDestinationConnectionID, Value: eightBytes})},
	{Name: "tp-client-stateless-reset-token", Section: "18.2", Level: Must, Want: want(tpErr), Roles: []Role{Server},
		Text:   "a client sends stateless_reset_token",
		Config: params(quicwire.TransportParameter{ID: quicwire.ParamStatelessResetToken, Value: make([]byte, 16)})},
	{Name: "tp-client-preferred-address", Section: "18.2", Level: Must, Want: want(tpErr), Roles: []Role{Server},
		Text:   "a client sends preferred_address",
		Config: params(quicwire.TransportParameter{ID: quicwire.ParamPreferredAddress, Value: preferredAddress()})},
	{Name: "tp-client-retry-source-cid", Section: "18.2", Level: Must, Want: want(tpErr), Roles: []Role{Server},
		Text:   "a client sends retry_source_connection_id",
		Config: params(quicwire.TransportParameter{ID: quicwire.ParamRetrySourceConnectionID, Value: eightBytes})},
	{Name: "tp-server-no-original-dcid", Section: "7.3", Level: Must, Want: want(tpErr, pvErr), Roles: []Role{Client},
		Text: "a server leaves out original_destination_connection_id",
		Config: func(cfg *quicpeer.Config, _ Side) {
			cfg.Omit = append(cfg.Omit, quicwire.ParamOriginalDestinationConnectionID)
		}},
	{Name: "tp-server-wrong-original-dcid", Section: "7.3", Level: Must, Want: want(tpErr, pvErr), Roles: []Role{Client},
		Text:   "a server's original_destination_connection_id unlike the client's first Destination Connection ID",
		Config: params(quicwire.TransportParameter{ID: quicwire.ParamOriginalDestinationConnectionID, Value: []byte{0xde, 0xad}})},
	{Name: "tp-server-retry-cid-without-retry", Section: "7.3", Level: Must, Want: want(tpErr, pvErr), Roles: []Role{Client},
		Text:   "a server sends retry_source_connection_id though it sent no Retry",
		Config: params(quicwire.TransportParameter{ID: quicwire.ParamRetrySourceConnectionID, Value: eightBytes})},
	{Name: "tp-server-reset-token-length", Section: "18.2", Level: Must, Want: want(tpErr), Roles: []Role{Client},
		Text:   "a server's stateless_reset_token of 15 bytes",
		Config: params(quicwire.TransportParameter{ID: quicwire.ParamStatelessResetToken, Value: make([]byte, 15)})},
}

// preferredAddress is a well-formed preferred_address value (RFC 9000
// §18.2): 127.0.0.1:4433, no IPv6, an 8-byte connection ID, a token.
func preferredAddress() []byte {
	b := []byte{127, 0, 0, 1, 0x11, 0x51}
	b = append(b, make([]byte, 18)...)
	b = append(b, 8)
	b = append(b, eightBytes...)
	return append(b, make([]byte, 16)...)
}

// overConnectionLimit sends, on as many of its bidirectional streams as it
// takes, one byte at the last offset each stream's limit allows, until the
// highest offsets add up to one byte past initial_max_data.
func overConnectionLimit(s *Session) error {
	total := s.Param(quicwire.ParamInitialMaxData, 0)
	perStream := s.Param(quicwire.ParamInitialMaxStreamDataBidiRemote, 0)
	streams := s.Param(quicwire.ParamInitialMaxStreamsBidi, 0)
	if perStream == 0 || (total+1+perStream-1)/perStream > streams {
		return ErrNotApplicable
	}
	var sum uint64
	for n := uint64(0); sum <= total; n++ {
		end := min(perStream, total+1-sum)
		if err := s.Send1RTT(quicwire.Stream{StreamID: s.Ours(false, n), Offset: end - 1, Data: []byte("x")}); err != nil {
			return err
		}
		sum += end
	}
	return nil
}
