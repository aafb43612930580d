package quicwire

import "fmt"

// Transport parameter IDs (RFC 9000 §18.2; max_datagram_frame_size from
// RFC 9221 §3, version_information from RFC 9368 §3).
const (
	ParamOriginalDestinationConnectionID = 0x00
	ParamMaxIdleTimeout                  = 0x01
	ParamStatelessResetToken             = 0x02
	ParamMaxUDPPayloadSize               = 0x03
	ParamInitialMaxData                  = 0x04
	ParamInitialMaxStreamDataBidiLocal   = 0x05
	ParamInitialMaxStreamDataBidiRemote  = 0x06
	ParamInitialMaxStreamDataUni         = 0x07
	ParamInitialMaxStreamsBidi           = 0x08
	ParamInitialMaxStreamsUni            = 0x09
	ParamAckDelayExponent                = 0x0a
	ParamMaxAckDelay                     = 0x0b
	ParamDisableActiveMigration          = 0x0c
	ParamPreferredAddress                = 0x0d
	ParamActiveConnectionIDLimit         = 0x0e
	ParamInitialSourceConnectionID       = 0x0f
	ParamRetrySourceConnectionID         = 0x10
	ParamMaxDatagramFrameSize            = 0x20
	ParamVersionInformation              = 0x11
)

// TransportParameter is one parameter as it goes on the wire: any ID, any
// value, so that forbidden and malformed ones can be sent.
type TransportParameter struct {
	ID    uint64
	Value []byte
}

// TransportParameters is a list of parameters in the order they are sent
// (a duplicate is a TRANSPORT_PARAMETER_ERROR, and can be built).
type TransportParameters []TransportParameter

// VarintParam is a parameter whose value is one varint.
func VarintParam(id, v uint64) TransportParameter {
	return TransportParameter{ID: id, Value: AppendVarint(nil, v)}
}

// Append appends the encoding of ps (RFC 9000 §18).
func (ps TransportParameters) Append(b []byte) []byte {
	for _, p := range ps {
		b = AppendVarint(b, p.ID)
		b = AppendVarint(b, uint64(len(p.Value)))
		b = append(b, p.Value...)
	}
	return b
}

// Get returns the value of the first parameter with id.
func (ps TransportParameters) Get(id uint64) ([]byte, bool) {
	for _, p := range ps {
		if p.ID == id {
			return p.Value, true
		}
	}
	return nil, false
}

// Varint returns the varint value of parameter id, or def when it is absent.
func (ps TransportParameters) Varint(id, def uint64) (uint64, error) {
	v, ok := ps.Get(id)
	if !ok {
		return def, nil
	}
	n, l, err := ReadVarint(v)
	if err != nil || l != len(v) {
		return 0, fmt.Errorf("%w: transport parameter 0x%x: %d bytes that are not one varint", ErrMalformed, id, len(v))
	}
	return n, nil
}

// Set replaces the first parameter with p's ID, or appends p.
func (ps TransportParameters) Set(p TransportParameter) TransportParameters {
	for i := range ps {
		if ps[i].ID == p.ID {
			ps[i] = p
			return ps
		}
	}
	return append(ps, p)
}

// Without returns ps without the parameters with id.
func (ps TransportParameters) Without(id uint64) TransportParameters {
	var out TransportParameters
	for _, p := range ps {
		if p.ID != id {
			out = append(out, p)
		}
	}
	return out
}

// ParseTransportParameters decodes an encoded list. Values alias b.
func ParseTransportParameters(b []byte) (TransportParameters, error) {
	var out TransportParameters
	r := &reader{b: b, what: "transport parameters"}
	for r.off < len(b) && r.err == nil {
		id := r.varint("ID")
		v := r.bytes(fmt.Sprintf("parameter 0x%x", id), r.varint("length"))
		out = append(out, TransportParameter{ID: id, Value: v})
	}
	return out, r.err
}
