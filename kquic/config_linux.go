package kquic

import (
	"fmt"
	"time"

	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/quicsock"
)

func micros(d time.Duration) uint32 { return uint32(d / time.Microsecond) }

func (p *TransportParameters) abi() quicabi.TransportParam {
	return quicabi.TransportParam{
		DisableActiveMigration:   p.DisableActiveMigration,
		GreaseQUICBit:            p.GreaseQUICBit,
		StatelessReset:           p.StatelessReset,
		Disable1RTTEncryption:    p.Disable1RTTEncryption,
		DisableCompatibleVersion: p.DisableCompatibleVersion,
		ActiveConnectionIDLimit:  p.ActiveConnectionIDLimit,
		AckDelayExponent:         p.AckDelayExponent,
		MaxDatagramFrameSize:     p.MaxDatagramFrameSize,
		MaxUDPPayloadSize:        p.MaxUDPPayloadSize,
		MaxIdleTimeout:           micros(p.MaxIdleTimeout),
		MaxAckDelay:              micros(p.MaxAckDelay),
		MaxStreamsBidi:           p.MaxStreamsBidi,
		MaxStreamsUni:            p.MaxStreamsUni,
		MaxData:                  p.MaxData,
		MaxStreamDataBidiLocal:   p.MaxStreamDataBidiLocal,
		MaxStreamDataBidiRemote:  p.MaxStreamDataBidiRemote,
		MaxStreamDataUni:         p.MaxStreamDataUni,
	}
}

func fromABI(a quicabi.TransportParam) TransportParameters {
	return TransportParameters{
		DisableActiveMigration:   a.DisableActiveMigration,
		GreaseQUICBit:            a.GreaseQUICBit,
		StatelessReset:           a.StatelessReset,
		Disable1RTTEncryption:    a.Disable1RTTEncryption,
		DisableCompatibleVersion: a.DisableCompatibleVersion,
		ActiveConnectionIDLimit:  a.ActiveConnectionIDLimit,
		AckDelayExponent:         a.AckDelayExponent,
		MaxDatagramFrameSize:     a.MaxDatagramFrameSize,
		MaxUDPPayloadSize:        a.MaxUDPPayloadSize,
		MaxIdleTimeout:           time.Duration(a.MaxIdleTimeout) * time.Microsecond,
		MaxAckDelay:              time.Duration(a.MaxAckDelay) * time.Microsecond,
		MaxStreamsBidi:           a.MaxStreamsBidi,
		MaxStreamsUni:            a.MaxStreamsUni,
		MaxData:                  a.MaxData,
		MaxStreamDataBidiLocal:   a.MaxStreamDataBidiLocal,
		MaxStreamDataBidiRemote:  a.MaxStreamDataBidiRemote,
		MaxStreamDataUni:         a.MaxStreamDataUni,
	}
}

// differences lists the fields set in want that got does not match.
func differences(want, got quicabi.TransportParam) []string {
	var d []string
	add := func(set bool, same bool, name string, w, g any) {
		if set && !same {
			d = append(d, fmt.Sprintf("%s: asked %v, kernel has %v", name, w, g))
		}
	}
	add(want.DisableActiveMigration, got.DisableActiveMigration, "DisableActiveMigration", true, false)
	add(want.GreaseQUICBit, got.GreaseQUICBit, "GreaseQUICBit", true, false)
	add(want.StatelessReset, got.StatelessReset, "StatelessReset", true, false)
	add(want.Disable1RTTEncryption, got.Disable1RTTEncryption, "Disable1RTTEncryption", true, false)
	add(want.DisableCompatibleVersion, got.DisableCompatibleVersion, "DisableCompatibleVersion", true, false)
	add(want.ActiveConnectionIDLimit != 0, want.ActiveConnectionIDLimit == got.ActiveConnectionIDLimit, "ActiveConnectionIDLimit", want.ActiveConnectionIDLimit, got.ActiveConnectionIDLimit)
	add(want.AckDelayExponent != 0, want.AckDelayExponent == got.AckDelayExponent, "AckDelayExponent", want.AckDelayExponent, got.AckDelayExponent)
	add(want.MaxDatagramFrameSize != 0, want.MaxDatagramFrameSize == got.MaxDatagramFrameSize, "MaxDatagramFrameSize", want.MaxDatagramFrameSize, got.MaxDatagramFrameSize)
	add(want.MaxUDPPayloadSize != 0, want.MaxUDPPayloadSize == got.MaxUDPPayloadSize, "MaxUDPPayloadSize", want.MaxUDPPayloadSize, got.MaxUDPPayloadSize)
	add(want.MaxIdleTimeout != 0, want.MaxIdleTimeout == got.MaxIdleTimeout, "MaxIdleTimeout(µs)", want.MaxIdleTimeout, got.MaxIdleTimeout)
	add(want.MaxAckDelay != 0, want.MaxAckDelay == got.MaxAckDelay, "MaxAckDelay(µs)", want.MaxAckDelay, got.MaxAckDelay)
	add(want.MaxStreamsBidi != 0, want.MaxStreamsBidi == got.MaxStreamsBidi, "MaxStreamsBidi", want.MaxStreamsBidi, got.MaxStreamsBidi)
	add(want.MaxStreamsUni != 0, want.MaxStreamsUni == got.MaxStreamsUni, "MaxStreamsUni", want.MaxStreamsUni, got.MaxStreamsUni)
	add(want.MaxData != 0, want.MaxData == got.MaxData, "MaxData", want.MaxData, got.MaxData)
	add(want.MaxStreamDataBidiLocal != 0, want.MaxStreamDataBidiLocal == got.MaxStreamDataBidiLocal, "MaxStreamDataBidiLocal", want.MaxStreamDataBidiLocal, got.MaxStreamDataBidiLocal)
	add(want.MaxStreamDataBidiRemote != 0, want.MaxStreamDataBidiRemote == got.MaxStreamDataBidiRemote, "MaxStreamDataBidiRemote", want.MaxStreamDataBidiRemote, got.MaxStreamDataBidiRemote)
	add(want.MaxStreamDataUni != 0, want.MaxStreamDataUni == got.MaxStreamDataUni, "MaxStreamDataUni", want.MaxStreamDataUni, got.MaxStreamDataUni)
	return d
}

// applyTransport sets the local transport parameters and reads them back, so
// that a value the kernel kept unchanged is an error rather than a surprise.
func applyTransport(s *quicsock.Socket, p *TransportParameters) error {
	if err := p.validate(); err != nil {
		return err
	}
	want := p.abi()
	if want == (quicabi.TransportParam{}) {
		return nil
	}
	if want.MaxUDPPayloadSize == 0 {
		want.MaxUDPPayloadSize = creditSafePayload(want)
	}
	if err := s.SetOption(quicabi.QUIC_SOCKOPT_TRANSPORT_PARAM, want.Marshal()); err != nil {
		return fmt.Errorf("kquic: set transport parameters: %w", err)
	}
	got, err := getTransport(s, false)
	if err != nil {
		return err
	}
	if d := differences(want, got); len(d) > 0 {
		return fmt.Errorf("kquic: the kernel did not take these transport parameters (a zero or false cannot undo a value inherited from the listener): %v", d)
	}
	return nil
}

func getTransport(s *quicsock.Socket, remote bool) (quicabi.TransportParam, error) {
	in := quicabi.TransportParam{Remote: remote}.Marshal()
	b, err := s.GetOption(quicabi.QUIC_SOCKOPT_TRANSPORT_PARAM, in)
	if err != nil {
		return quicabi.TransportParam{}, fmt.Errorf("kquic: get transport parameters: %w", err)
	}
	return quicabi.UnmarshalTransportParam(b)
}

// applySettings sets QUIC_SOCKOPT_CONFIG from c.
func (c *Config) applySettings(s *quicsock.Socket) error {
	q := quicabi.Config{
		Version:                uint32(c.Version),
		PLPMTUDProbeInterval:   micros(c.PLPMTUDProbeInterval),
		InitialSmoothedRTT:     micros(c.InitialRTT),
		CongestionControlAlgo:  quicabi.CongAlgo(c.CongestionControl),
		ValidatePeerAddress:    c.ValidatePeerAddress,
		StreamDataNodelay:      c.StreamDataNoDelay,
		KeepaliveProbeInterval: micros(c.KeepAlive),
	}
	if q == (quicabi.Config{}) {
		return nil
	}
	if err := s.SetOption(quicabi.QUIC_SOCKOPT_CONFIG, q.Marshal()); err != nil {
		return fmt.Errorf("kquic: set config: %w", err)
	}
	return nil
}

// apply configures a socket before its handshake.
func (c *Config) apply(s *quicsock.Socket) error {
	if err := applyTransport(s, &c.Transport); err != nil {
		return err
	}
	return c.applySettings(s)
}

// applyInitialMaxUDPPayload gives the kernel InitialMaxUDPPayload as the
// server's max_udp_payload_size, on a client socket that is connected and
// has not started its handshake (the module takes the peer's transport
// parameters from userspace only then, as for 0-RTT). It sets only that
// field: the kernel keeps its other values of the peer's parameters, and
// the module re-routes the socket, which caps its packets (quic_outq_set_param,
// quic_packet_mss_update).
func (c *Config) applyInitialMaxUDPPayload(s *quicsock.Socket) error {
	if c.InitialMaxUDPPayload == 0 {
		return nil
	}
	tp := quicabi.TransportParam{Remote: true, MaxUDPPayloadSize: c.InitialMaxUDPPayload}
	if err := s.SetOption(quicabi.QUIC_SOCKOPT_TRANSPORT_PARAM, tp.Marshal()); err != nil {
		return fmt.Errorf("kquic: cap the first flight's datagrams at %d bytes (InitialMaxUDPPayload, as the server's max_udp_payload_size): %w", c.InitialMaxUDPPayload, err)
	}
	return nil
}
