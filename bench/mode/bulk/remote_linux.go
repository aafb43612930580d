//go:build linux

package bulk

import (
	"context"
	"encoding/json"
	"fmt"

	"kquic.dev/bench/host"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
)

// The operations a bulk client asks a kqbench server (two-host mode) for,
// to record where the server's device put a sample's flows: its queues'
// setup, and their counters at each edge of the window.
const (
	opQueueSetup    = "bulk-queue-setup"
	opQueueSnapshot = "bulk-queue-snapshot"
)

func init() {
	side.RegisterOp([]string{opQueueSetup, opQueueSnapshot}, func(s side.Session) side.Op { return queueOp{s} })
}

// queueAnswer is the answers' fields.
type queueAnswer struct {
	Setup    *results.NICQueues  `json:"queue_setup,omitempty"`
	Snapshot *host.QueueSnapshot `json:"queue_snapshot,omitempty"`
}

// queueOp reads the server's device for a session.
type queueOp struct{ s side.Session }

// Handle reads the device's queue setup or its counters, in its namespace.
func (o queueOp) Handle(name string, _ json.RawMessage) (any, error) {
	var a queueAnswer
	err := o.s.Do(func() error {
		if name == opQueueSetup {
			n := host.QueueSetup("server", o.s.Device())
			a.Setup = &n
		} else {
			q := host.SnapshotQueues(o.s.Device())
			a.Snapshot = &q
		}
		return nil
	})
	return a, err
}

// Stop: the op runs nothing.
func (queueOp) Stop() {}

// queues records the queues of both ends' devices over a sample's window
// in two-host mode: the client's device (this host's) and the server's
// (asked of the kqbench server); nothing on the single-host topology,
// whose veth pair has no queues to speak of.
type queues struct {
	ctx    context.Context
	client side.ClientSide
	dev    string
	caller side.Caller
	setup  []results.NICQueues
	snaps  [2][2]host.QueueSnapshot // [edge][end]
	errs   []string
}

// newQueues prepares the record of a sample's queues, nil where there is
// none to make (a client that is not a named device, or a local server).
func newQueues(ctx context.Context, client side.ClientSide, server side.ServerSide) *queues {
	named, ok := client.(interface{ Name() string })
	caller, remote := server.(side.Caller)
	if !ok || !remote {
		return nil
	}
	q := &queues{ctx: ctx, client: client, dev: named.Name(), caller: caller}
	client.Do(func() error {
		q.setup = append(q.setup, host.QueueSetup("client", q.dev))
		return nil
	})
	var a queueAnswer
	if err := caller.Call(ctx, opQueueSetup, nil, &a); err != nil || a.Setup == nil {
		q.errs = append(q.errs, fmt.Sprintf("the server's device: %v (a kqbench server of this version answers %s)", err, opQueueSetup))
	} else {
		q.setup = append(q.setup, *a.Setup)
	}
	return q
}

// snapshot reads both ends' counters at one edge of the window.
func (q *queues) snapshot(open bool) {
	e := 1
	if open {
		e = 0
	}
	q.client.Do(func() error {
		q.snaps[e][0] = host.SnapshotQueues(q.dev)
		return nil
	})
	if len(q.setup) < 2 {
		return
	}
	var a queueAnswer
	if err := q.caller.Call(q.ctx, opQueueSnapshot, nil, &a); err != nil || a.Snapshot == nil {
		q.errs = append(q.errs, fmt.Sprintf("the server's queue counters: %v", err))
		q.setup = q.setup[:1]
		return
	}
	q.snaps[e][1] = *a.Snapshot
}

// result is each end's queues with their counts over the window, and
// what could not be read.
func (q *queues) result() ([]results.NICQueues, []string) {
	for i := range q.setup {
		host.CountQueues(&q.setup[i], q.snaps[0][i], q.snaps[1][i])
	}
	return q.setup, q.errs
}
