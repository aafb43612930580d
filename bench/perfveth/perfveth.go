//go:build linux

// Package perfveth runs the module's C perf_test against kqbench perf
// across a veth pair between two network namespaces, with kqbench matrix's
// own kquic cell on the same pair as a further contender (perftest.Compare
// with the pair's namespaces), so the matrix's kernel QUIC column can be set
// against the C tool.
package perfveth

import (
	"context"
	"fmt"
	"io"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	_ "kquic.dev/bench/mode/all" // the default mode measures the matrix cell
	"kquic.dev/bench/perftest"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/topo"
)

// MatrixCell names the contender UseVeth adds: kqbench matrix's kquic cell.
const MatrixCell = "kqbench matrix kquic cell"

// Use makes o run across a veth pair between two new network
// namespaces, set up as kqbench matrix sets a cell's (mtu, GSO on or off):
// the servers in one, the clients in the other, Addr the server end's. It
// adds kqbench matrix's own kquic cell as a contender on the same pair (the
// matrix's 500 ms warm-up, then cellTime of counted bytes), so the matrix's
// kernel QUIC column can be set against the module's C tool. Close the
// returned pair when done.
func Use(o *perftest.CompareOptions, mtu int, gso bool, cellTime time.Duration) (io.Closer, error) {
	t, err := topo.New()
	if err != nil {
		return nil, fmt.Errorf("perfveth: veth pair: %w", err)
	}
	if err := t.SetMTU(mtu); err != nil {
		t.Close()
		return nil, fmt.Errorf("perfveth: veth pair: %w", err)
	}
	if _, err := t.SetGSO(gso); err != nil {
		t.Close()
		return nil, fmt.Errorf("perfveth: veth pair: %w", err)
	}
	o.ServerNS, o.ClientNS = t.Server, t.Client
	o.Addr = topo.ServerAddr.String()
	o.Extra = append(o.Extra, perftest.Contender{Name: MatrixCell,
		Run: func(ctx context.Context, size int) (float64, error) {
			smp, err := matrixCell(ctx, t, size, mtu, gso, cellTime)
			if err != nil {
				return 0, err
			}
			return smp.Bps / (1 << 20), nil // perf_test's Mbit/s
		}})
	return t, nil
}

// matrixCell measures one sample of kqbench matrix's kquic cell of the
// default mode (one stream up, encrypted) between t's namespaces, as a
// single-host run does: its warm-up of 500 ms, then dur of counted bytes.
// The cell's MTU and GSO are applied to t by Use.
func matrixCell(ctx context.Context, t *topo.Topology, size, mtu int, gso bool, dur time.Duration) (results.Sample, error) {
	c := matrix.Cell{Transport: "kquic", Size: size, MTU: mtu, GSO: gso, Crypto: true, Streams: 1, Direction: "up"}
	m, err := mode.For("", c)
	if err != nil {
		return results.Sample{}, err
	}
	env := &mode.Env{
		Spec:     &matrix.Spec{Warmup: 500 * time.Millisecond, Time: dur},
		Client:   t.ClientDevice(),
		Server:   side.Local{T: t, CPU: -1},
		Topology: t,
	}
	if st, note := m.Check(env, c); st != "" {
		return results.Sample{}, fmt.Errorf("%s cell: %s: %s", c.Transport, st, note)
	}
	return m.Sample(ctx, env, c, 0)
}
