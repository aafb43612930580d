package quicnet_test

import (
	"io"
	"testing"

	"kquic.dev/quicnet"
)

// The suite runs over the implementation Auto chooses here
// (quicnet.Implementation()): kernel QUIC in the guest with the module,
// quic-go on the host, or the one $QUICNET_IMPLEMENTATION names. The
// tests that compare the two, or pin one, choose per connection
// (Config.Implementation). What differs between the two for a test lives
// in implHooks, one per implementation built in (impl_*_test.go).

// implHooks is what a test needs of one implementation's internals.
type implHooks struct {
	// require skips (or fails) where the implementation cannot run
	// here (nil: it runs everywhere).
	require func(t testing.TB)
	// hasOriginal reports whether err keeps the implementation's own
	// error.
	hasOriginal func(err error) bool
	// watchStreamEnds returns a function that waits until the whole of a
	// stream the peer sends on c, its n bytes and its FIN, has arrived,
	// none of it read.
	watchStreamEnds func(t *testing.T, c *quicnet.Conn) func(r *quicnet.ReceiveStream, n int)
	// directBulk is quicnetBulk straight on the implementation.
	directBulk func(b *testing.B) (io.WriteCloser, <-chan int64)
}

var hooks = map[quicnet.Impl]implHooks{}

// requireImpl skips (or fails, where $KQUIC_REQUIRE lists quic) where the
// implementation under test cannot run: kernel QUIC without the module
// ($QUICNET_IMPLEMENTATION=kquic on a machine without it).
func requireImpl(t testing.TB) {
	t.Helper()
	requireImplOf(t, quicnet.Implementation())
}

// requireImplOf skips where implementation i cannot run here: not built
// in, or kernel QUIC without the module (a failure where $KQUIC_REQUIRE
// lists quic).
func requireImplOf(t testing.TB, i quicnet.Impl) {
	t.Helper()
	if _, ok := hooks[i]; !ok {
		t.Skipf("%s: %v", i, quicnet.Available(i))
	}
	if r := hooks[i].require; r != nil {
		r(t)
	}
}

// hasOriginal reports whether err keeps an implementation's own error.
func hasOriginal(err error) bool {
	for _, h := range hooks {
		if h.hasOriginal(err) {
			return true
		}
	}
	return false
}

// watchStreamEnds: see implHooks.
func watchStreamEnds(t *testing.T, c *quicnet.Conn) func(r *quicnet.ReceiveStream, n int) {
	t.Helper()
	return hooks[c.Implementation()].watchStreamEnds(t, c)
}

// directBulk: see implHooks, for the implementation under test.
func directBulk(b *testing.B) (io.WriteCloser, <-chan int64) {
	requireImpl(b)
	return hooks[quicnet.Implementation()].directBulk(b)
}

// forEachImpl runs f for each implementation of this build, each in a subtest of
// its own that skips where it cannot run (kernel QUIC without the module),
// for the tests that run over both where both can.
func forEachImpl(t *testing.T, f func(t *testing.T, i quicnet.Impl)) {
	for _, i := range quicnet.Implementations() {
		t.Run(string(i), func(t *testing.T) {
			requireImplOf(t, i)
			f(t, i)
		})
	}
}
