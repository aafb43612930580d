//go:build linux

package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"sync"

	"kquic.dev/bench/side"
	"kquic.dev/internal/jsonobj"
)

// An Op is the server side of operations a mode adds to the control
// protocol (the h3 mode's server of its handler), one per session.
type Op interface {
	// Handle answers a request of one of the op's names, req being the
	// whole message: the answer's fields go into the response beside the
	// error, which the client gets as its call's error.
	Handle(name string, req json.RawMessage) (answer any, err error)
	// Stop ends what the op runs: before a new sample, and at the
	// session's end.
	Stop()
}

// Session is what an op's server side may use of the session it runs in.
type Session interface {
	// Do runs fn where the server's benchmark sockets belong (its
	// device's network namespace).
	Do(fn func() error) error
	// Addr is the server's address the client reaches it at.
	Addr() netip.Addr
}

// opType is a registration: the names of its requests, and what makes its
// server side for a session.
type opType struct {
	names []string
	new   func(Session) Op
}

var (
	opMu    sync.RWMutex
	opTypes []*opType
)

// RegisterOp adds the operations named names to the protocol; new makes
// their server side in a session that asks for one of them. A name the
// protocol has already panics: it is a program's error, found at start.
func RegisterOp(names []string, new func(Session) Op) {
	opMu.Lock()
	defer opMu.Unlock()
	for _, n := range names {
		if opTypeOf(n) != nil || slices.Contains(builtinOps, n) {
			panic(fmt.Sprintf("remote: operation %q registered twice", n))
		}
	}
	opTypes = append(opTypes, &opType{names: names, new: new})
}

// builtinOps are the protocol's own operations.
var builtinOps = []string{opHello, opPrepare, opListen, opSnapshot, opStop}

// opTypeOf is the registration of operation name, or nil (opMu held).
func opTypeOf(name string) *opType {
	for _, t := range opTypes {
		if slices.Contains(t.names, name) {
			return t
		}
	}
	return nil
}

// registeredOp is the registration of operation name, or nil.
func registeredOp(name string) *opType {
	opMu.RLock()
	defer opMu.RUnlock()
	return opTypeOf(name)
}

// sessionOps are a session's ops, made as their requests come.
type sessionOps map[*opType]Op

// handleOp answers a request of a registered operation.
func (x *session) handleOp(t *opType, name string, raw json.RawMessage) (json.RawMessage, error) {
	if x.ops == nil {
		x.ops = sessionOps{}
	}
	op, ok := x.ops[t]
	if !ok {
		op = t.new(opSession{x})
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

// opSession is a session as its ops see it.
type opSession struct{ x *session }

func (s opSession) Do(fn func() error) error { return s.x.s.dev.Do(fn) }
func (s opSession) Addr() netip.Addr         { return s.x.addr }

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
