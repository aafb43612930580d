// Package jsonnum encodes numbers that JSON cannot carry: a float64 that
// is not finite (an interval without enough samples has an infinite end;
// JSON has no Inf or NaN) encodes as null.
package jsonnum

import (
	"encoding/json"
	"math"
)

// Finite is a float64 that encodes as JSON null where it is not finite.
type Finite float64

// MarshalJSON encodes f, or null where it is not finite.
func (f Finite) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}
