package ratio

import (
	"encoding/json"
	"math"
)

// finite is a float64 that encodes as JSON null where it is not finite
// (JSON has no Inf; an interval from one sample has Hi = +Inf).
type finite float64

// MarshalJSON encodes x, or null where x is not finite.
func (f finite) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

// MarshalJSON encodes the interval, its unbounded end as null.
func (i Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Center finite `json:"center"`
		Lo     finite `json:"lo"`
		Hi     finite `json:"hi"`
		N      int    `json:"n,omitempty"`
		M      int    `json:"m,omitempty"`
	}{finite(i.Center), finite(i.Lo), finite(i.Hi), i.N, i.M})
}
