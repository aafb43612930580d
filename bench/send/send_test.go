//go:build linux

package send

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// sendOver sends count messages of msg by method m over a loopback TCP
// connection, and returns the SHA-256 of what the receiver read and the
// sender's counters.
func sendOver(t *testing.T, m string, msg []byte, count int) ([32]byte, map[string]float64) {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan [32]byte, 1)
	rerr := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			rerr <- err
			return
		}
		defer c.Close()
		h := sha256.New()
		_, err = io.Copy(h, c)
		var sum [32]byte
		copy(sum[:], h.Sum(nil))
		got <- sum
		rerr <- err
	}()
	c, err := net.DialTCP("tcp", nil, ln.Addr().(*net.TCPAddr))
	if err != nil {
		t.Fatal(err)
	}
	var cnt Counters
	s, err := New(m, c, msg, &cnt)
	if err != nil {
		c.Close()
		t.Fatalf("%s: %v", m, err)
	}
	for i := 0; i < count; i++ {
		if err := s.Send(); err != nil {
			t.Fatalf("%s: message %d: %v", m, i, err)
		}
	}
	// The completions of the last sends, before the socket goes.
	if z, ok := s.(*zeroCopy); ok {
		if err := z.Flush(5 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	c.CloseWrite()
	if err := <-rerr; err != nil {
		t.Fatalf("%s: receiver: %v", m, err)
	}
	c.Close()
	return <-got, cnt.Map()
}

// Each send method moves the bytes it says: the receiver's hash is that of
// the messages, the sender's byte counter their length, and its calls and
// completions are what the method implies.
func TestMethodsMoveTheirBytes(t *testing.T) {
	msg := make([]byte, 200<<10) // bigger than one send takes, at times
	for i := range msg {
		msg[i] = byte(i*7 + i>>9)
	}
	const count = 64
	want := sha256.Sum256(bytes.Repeat(msg, count))
	for _, m := range []string{Write, Sendfile, ZeroCopy} {
		t.Run(m, func(t *testing.T) {
			sum, c := sendOver(t, m, msg, count)
			if sum != want {
				t.Errorf("%s: the receiver's hash differs from the messages'", m)
			}
			if c[CounterBytes] != float64(count*len(msg)) {
				t.Errorf("%s: counted %v bytes sent, want %d", m, c[CounterBytes], count*len(msg))
			}
			if c[CounterCalls] < count {
				t.Errorf("%s: %v calls for %d messages", m, c[CounterCalls], count)
			}
			t.Logf("%s: %v", m, c)
			switch m {
			case ZeroCopy:
				if c[CounterZCSent] != c[CounterCalls] || c[CounterZCDone] != c[CounterZCSent] {
					t.Errorf("zerocopy: %v sends, %v completions, %v calls: want every call a zero-copy send, each completed", c[CounterZCSent], c[CounterZCDone], c[CounterCalls])
				}
				// Over loopback the kernel copies every one (it delivers
				// on this host).
				if c[CounterZCCopied] != c[CounterZCDone] {
					t.Errorf("zerocopy over loopback: %v of %v completions marked copied, want all", c[CounterZCCopied], c[CounterZCDone])
				}
			default:
				if _, ok := c[CounterZCSent]; ok {
					t.Errorf("%s counted zero-copy sends: %v", m, c)
				}
			}
		})
	}
}

// A stream without a socket is refused by name, and each transport's
// missing methods say why.
func TestMethodRefusals(t *testing.T) {
	var cnt Counters
	for _, m := range []string{Sendfile, ZeroCopy, UringZC} {
		if _, err := New(m, io.Discard, []byte("x"), &cnt); !errors.Is(err, ErrNoSocket) {
			t.Errorf("%s on a writer without a socket: %v, want ErrNoSocket", m, err)
		}
	}
	if err := Check("splice"); err == nil || !strings.Contains(err.Error(), "write, sendfile, zerocopy, uring-zc") {
		t.Errorf("Check(splice): %v", err)
	}
	for _, tc := range []struct{ t, m, want string }{
		{"tcp", Sendfile, ""}, {"ktls", Sendfile, ""}, {"tcp", ZeroCopy, ""},
		{"ktls", ZeroCopy, "EOPNOTSUPP"}, {"kquic", Sendfile, "MSG_SPLICE_PAGES"}, {"kquic", ZeroCopy, "MSG_ZEROCOPY"},
		{"quic-go", Sendfile, "userspace"}, {"kquic", Write, ""},
		{"tcp", UringZC, uringNA()}, {"ktls", UringZC, "EOPNOTSUPP"}, {"kquic", UringZC, "SEND_ZC"}, {"quic-go", UringZC, "userspace"},
	} {
		if got := NA(tc.t, tc.m); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("NA(%s, %s) = %q, want %q", tc.t, tc.m, got, tc.want)
		}
	}
}

// TestCountersReadTogether: a reading taken while senders count holds as
// many zero-copy sends as calls, and as many copied as completed (the
// window's figures are differences of two readings; read counter by
// counter, one was a send ahead of the other and failed
// bench.TestSendMethodCells: "3716 zero-copy sends of 3715 calls").
func TestCountersReadTogether(t *testing.T) {
	var c Counters
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				c.sent(100, true)
				c.completed(1, 1)
			}
		}
	}()
	for i := 0; i < 20000; i++ {
		m := c.Map()
		if m[CounterZCSent] != m[CounterCalls] || m[CounterZCCopied] != m[CounterZCDone] || m[CounterBytes] != 100*m[CounterCalls] {
			t.Fatalf("reading %d: %v", i, m)
		}
	}
	close(stop)
	<-done
}
