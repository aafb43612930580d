//go:build linux

package bulk

import (
	"context"
	"fmt"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

// MeasureCell measures one sample of the cell between the two namespaces of
// t exactly as kqbench matrix does (its warm-up, then dur of counted
// bytes), for a caller that sets the topology up itself - to set a matrix
// cell beside another tool on the same veth pair. The cell's MTU and GSO
// are the caller's to apply to t.
func MeasureCell(ctx context.Context, t *topo.Topology, c matrix.Cell, warmup, dur time.Duration) (results.Sample, error) {
	tr, err := transport.Get(c.Transport)
	if err != nil {
		return results.Sample{}, err
	}
	if err := tr.Available(); err != nil {
		return results.Sample{}, fmt.Errorf("%s: %w", c.Transport, err)
	}
	if c.Streams == 0 {
		c.Streams = 1
	}
	if c.Direction == "" {
		c.Direction = "up"
	}
	return Measure(ctx, t.ClientDevice(), side.Local{T: t, CPU: -1}, tr, c, transport.Options{Crypto: c.Crypto, GSO: c.GSO}, nil, warmup, dur, nil)
}
