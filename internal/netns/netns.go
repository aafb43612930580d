// Package netns creates network namespaces for tests, probes and benchmarks,
// and runs code inside them without disturbing the rest of the process.
package netns

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netlink"
	vns "github.com/vishvananda/netns"
)

// NS is a network namespace created by New. It lives until Close (and until
// no socket or process inside it remains).
type NS struct {
	h vns.NsHandle
}

// New creates an anonymous network namespace. It needs CAP_SYS_ADMIN.
func New() (*NS, error) {
	runtime.LockOSThread()
	orig, err := vns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("netns: current namespace: %w", err)
	}
	defer orig.Close()
	h, err := vns.New() // unshare(CLONE_NEWNET) on this thread
	if err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("netns: create a network namespace: %w (this needs root)", err)
	}
	if err := vns.Set(orig); err != nil {
		// The thread is stuck in the new namespace: let it die with the
		// goroutine instead of returning it to the scheduler.
		h.Close()
		return nil, fmt.Errorf("netns: return to the original namespace: %w", err)
	}
	runtime.UnlockOSThread()
	return &NS{h: h}, nil
}

// Handle is the namespace's file descriptor handle.
func (n *NS) Handle() vns.NsHandle { return n.h }

// Do runs fn with the calling goroutine's thread inside the namespace. Sockets
// that fn opens stay in the namespace after Do returns.
func (n *NS) Do(fn func() error) error {
	runtime.LockOSThread()
	orig, err := vns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("netns: current namespace: %w", err)
	}
	defer orig.Close()
	if err := vns.Set(n.h); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("netns: enter namespace: %w", err)
	}
	ferr := fn()
	if err := vns.Set(orig); err != nil {
		return fmt.Errorf("netns: leave namespace: %w", err) // thread stays locked and dies
	}
	runtime.UnlockOSThread()
	return ferr
}

// Netlink returns a netlink handle that works inside the namespace.
func (n *NS) Netlink() (*netlink.Handle, error) {
	h, err := netlink.NewHandleAt(n.h)
	if err != nil {
		return nil, fmt.Errorf("netns: netlink socket in namespace: %w", err)
	}
	return h, nil
}

// Close releases the namespace.
func (n *NS) Close() error { return n.h.Close() }
