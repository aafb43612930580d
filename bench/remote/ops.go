//go:build linux

package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"

	"kquic.dev/bench/side"
	"kquic.dev/internal/jsonobj"
)

// builtinOps are the protocol's own operations, which no mode's may be.
var builtinOps = []string{opHello, opPrepare, opListen, opSnapshot, opStop}

// sessionOps are a session's ops, made as their requests come.
type sessionOps map[*side.OpType]side.Op

// handleOp answers a request of a registered operation.
func (x *session) handleOp(t *side.OpType, name string, raw json.RawMessage) (json.RawMessage, error) {
	if x.ops == nil {
		x.ops = sessionOps{}
	}
	op, ok := x.ops[t]
	if !ok {
		op = t.New(opSession{x})
		x.ops[t] = op
	}
	answer, err := op.Handle(name, raw)
	resp := response{}
	if err != nil {
		resp.Error = err.Error()
	}
	return withAnswer(resp, answer)
}

// stopOps stops what the session's ops run.
func (x *session) stopOps() {
	for _, op := range x.ops {
		op.Stop()
	}
}

// opSession is a session as its ops see it (side.Session).
type opSession struct{ x *session }

func (s opSession) Do(fn func() error) error { return s.x.s.dev.Do(fn) }
func (s opSession) Addr() netip.Addr         { return s.x.addr }
func (s opSession) Device() string           { return s.x.s.dev.Name() }

// withAnswer is the response with the fields of answer (a struct, or nil)
// beside its own.
func withAnswer(resp response, answer any) (json.RawMessage, error) {
	var parts []jsonobj.Part
	if answer != nil {
		b, err := json.Marshal(answer)
		if err != nil {
			return nil, err
		}
		fs, err := jsonobj.Fields(b)
		if err != nil {
			return nil, fmt.Errorf("an answer must be an object: %w", err)
		}
		for _, f := range fs {
			parts = append(parts, jsonobj.Part{Key: f.Key, Value: f.Value})
		}
	}
	return jsonobj.Marshal(resp, parts...)
}

var _ side.Caller = (*Client)(nil)

// Call sends operation op, with the fields of args (a struct, or nil)
// beside its name, and decodes the answer's fields into answer (a pointer,
// or nil); an answer with an error returns it, answer decoded all the same.
func (c *Client) Call(ctx context.Context, op string, args, answer any) error {
	if args == nil {
		args = struct{}{}
	}
	return c.exchange(ctx, op, func(sampleMS int64) (any, error) {
		b, err := jsonobj.Marshal(args, jsonobj.Part{Key: "op", Value: op}, jsonobj.Part{Key: "sample_ms", Value: sampleMS})
		return json.RawMessage(b), err
	}, answer)
}
