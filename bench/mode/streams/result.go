package streams

import "kquic.dev/bench/results"

// Seconds are the objects' completion times of a sample, in stream order:
// the sample's payload.
type Seconds []float64

// PayloadKey is "stream_seconds".
func (*Seconds) PayloadKey() string { return "stream_seconds" }

func init() {
	results.RegisterPayload(results.PayloadType{Key: "stream_seconds", Sample: func() results.Payload { return &Seconds{} }})
}

// SecondsOf is the completion times of a sample, nil for a sample without.
func SecondsOf(s *results.Sample) Seconds {
	if p, ok := s.Payload.(*Seconds); ok {
		return *p
	}
	return nil
}
