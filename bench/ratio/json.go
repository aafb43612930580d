package ratio

import (
	"encoding/json"

	"kquic.dev/internal/jsonnum"
)

// MarshalJSON encodes the interval, its unbounded end as null.
func (i Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Center jsonnum.Finite `json:"center"`
		Lo     jsonnum.Finite `json:"lo"`
		Hi     jsonnum.Finite `json:"hi"`
		N      int            `json:"n,omitempty"`
		M      int            `json:"m,omitempty"`
	}{jsonnum.Finite(i.Center), jsonnum.Finite(i.Lo), jsonnum.Finite(i.Hi), i.N, i.M})
}
