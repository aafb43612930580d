//go:build linux

package side

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"sync"
)

// An Op is the server side of operations a mode adds to the control
// protocol of two-host mode (the h3 mode's server of its handler), one per
// session of a kqbench server.
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
	// Device is the name of the server's benchmark device (its --dev).
	Device() string
}

// OpType is a registration: the names of its requests, and what makes
// its server side for a session.
type OpType struct {
	Names []string
	New   func(Session) Op
}

var (
	opMu    sync.RWMutex
	opTypes []*OpType
)

// RegisterOp adds the operations named names to the control protocol of
// two-host mode (bench/remote); new makes their server side in a session
// that asks for one of them. A name registered twice panics: it is a
// program's error, found at start.
func RegisterOp(names []string, new func(Session) Op) {
	opMu.Lock()
	defer opMu.Unlock()
	for _, n := range names {
		if opTypeOf(n) != nil {
			panic(fmt.Sprintf("side: operation %q registered twice", n))
		}
	}
	opTypes = append(opTypes, &OpType{Names: names, New: new})
}

// opTypeOf is the registration of operation name, or nil (opMu held).
func opTypeOf(name string) *OpType {
	for _, t := range opTypes {
		if slices.Contains(t.Names, name) {
			return t
		}
	}
	return nil
}

// RegisteredOp is the registration of operation name, or nil.
func RegisteredOp(name string) *OpType {
	opMu.RLock()
	defer opMu.RUnlock()
	return opTypeOf(name)
}
