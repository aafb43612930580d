package kquic

// Waiting for flow-control credit: a writer held back by the peer's
// MAX_STREAM_DATA or MAX_DATA learns when it may have come.

import (
	"os"

	"kquic.dev/internal/quicabi"
)

// watchCredit makes flowSig tell a writer held back by flow control that
// credit may have come, while one is (creditWaiters). unwatchCredit undoes
// it.
//
// Stream credit (MAX_STREAM_DATA) comes with the module's
// QUIC_EVENT_STREAM_MAX_DATA, turned on here (unless the application has
// it on): handleEvent broadcasts flowSig. Connection credit (MAX_DATA)
// has no event: the module's MAX_DATA handler (quic_frame_max_data_process)
// only wakes the socket's writers (sk_write_space), that is EPOLLOUT, and
// poll reports the socket writable only while the connection's window is
// open. A writer cannot wait for that in the poller on the socket itself:
// the wait would keep the descriptor's write lock, which every other
// writer and SendDatagram need, for as long as the peer withholds credit.
// So a goroutine waits for it on a second descriptor of the socket
// (creditFile, registered with the poller on its own) and broadcasts
// flowSig at every EPOLLOUT: MAX_DATA, MAX_STREAM_DATA, acknowledgements
// that free buffer space. Waiting writers capture flowSig before their
// sendmsg, so none of these is missed. If the descriptor cannot be had
// (or over a scripted kernel), writers retry every connCreditRetry.
func (c *Conn) watchCredit() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.creditWaiters++
	if c.creditWaiters != 1 {
		return
	}
	if !c.user[EventStreamMaxData] {
		_ = c.sock.SetOption(quicabi.QUIC_SOCKOPT_EVENT, quicabi.EventOption{Type: quicabi.QUIC_EVENT_STREAM_MAX_DATA, On: true}.Marshal())
	}
	if c.creditFile == nil && c.Err() == nil {
		if f, err := c.sock.Dup(); err == nil {
			c.creditFile = f
			go c.watchWritable(f)
		}
	}
}

// watchWritable broadcasts flowSig at every EPOLLOUT on f (and once at
// the start), until f is closed.
func (c *Conn) watchWritable(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Write(func(uintptr) bool {
		c.mu.Lock()
		c.flowSig.broadcast()
		c.mu.Unlock()
		return false // wait for the next EPOLLOUT
	})
}

// creditWatched reports whether creditFile is watched: writers need not
// retry on a timer. Call with c.mu held.
func (c *Conn) creditWatched() bool { return c.creditFile != nil }

func (c *Conn) unwatchCredit() {
	c.mu.Lock()
	c.creditWaiters--
	if c.creditWaiters != 0 {
		c.mu.Unlock()
		return
	}
	if !c.user[EventStreamMaxData] && c.Err() == nil {
		_ = c.sock.SetOption(quicabi.QUIC_SOCKOPT_EVENT, quicabi.EventOption{Type: quicabi.QUIC_EVENT_STREAM_MAX_DATA, On: false}.Marshal())
	}
	f := c.creditFile
	c.creditFile = nil
	c.mu.Unlock()
	if f != nil {
		f.Close() // outside c.mu: it waits for watchWritable, which takes it
	}
}

// stopCreditWatch closes creditFile, so that the socket is released when
// the connection closes it (the kernel frees a socket once its last
// descriptor is closed).
func (c *Conn) stopCreditWatch() {
	c.mu.Lock()
	f := c.creditFile
	c.creditFile = nil
	c.mu.Unlock()
	if f != nil {
		f.Close()
	}
}
