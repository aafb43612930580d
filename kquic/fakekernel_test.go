//go:build linux

package kquic

import (
	"bytes"
	"crypto/tls"
	"net/netip"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/quicsock"
)

// fakeKernel scripts the kernel's side of a connected QUIC socket for the
// tests of the connection's concurrency core (read handoff, stream state,
// deadlines): what recvmsg delivers, what sendmsg accepts, the options.
type fakeKernel struct {
	mu      sync.Mutex
	changed chan struct{} // closed and renewed on every change
	inbox   []fakeMsg     // what recvmsg delivers next
	gone    bool          // the connection ended: recvmsg says ENOTCONN once inbox is empty
	close   quicabi.ConnectionClose
	sent    map[int64]*bytes.Buffer
	fins    map[int64]bool
	full    bool // sendmsg waits (the socket's buffer is full)
	nextID  [4]int64
	resets  map[int64]uint32
	stops   map[int64]uint32
	recvs   int                    // recvmsg calls that returned something
	local   quicabi.TransportParam // what getsockopt(TRANSPORT_PARAM) says of this side
}

type fakeMsg struct {
	data   []byte
	stream int64 // -1: none
	flags  uint32
	rflags int
}

func newFakeConn(t *testing.T, client bool) (*Conn, *fakeKernel) {
	t.Helper()
	return newFakeConnParams(t, client, quicabi.TransportParam{})
}

// newFakeConnParams is newFakeConn with this side's transport parameters
// as the kernel reports them.
func newFakeConnParams(t *testing.T, client bool, local quicabi.TransportParam) (*Conn, *fakeKernel) {
	t.Helper()
	k := &fakeKernel{changed: make(chan struct{}), sent: map[int64]*bytes.Buffer{}, fins: map[int64]bool{},
		resets: map[int64]uint32{}, stops: map[int64]uint32{}, local: local}
	k.nextID = [4]int64{0, 1, 2, 3}
	sock := quicsock.NewFake(k, netip.MustParseAddrPort("127.0.0.1:1000"), netip.MustParseAddrPort("127.0.0.1:2000"))
	c, err := newConn(sock, nil, &Config{TLS: &tls.Config{}}, client)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, k
}

// notify wakes the waiting calls. Call with k.mu held.
func (k *fakeKernel) notify() {
	close(k.changed)
	k.changed = make(chan struct{})
}

// deliver queues stream data (fin: the stream's last).
func (k *fakeKernel) deliver(id int64, data string, fin bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var f uint32
	if fin {
		f = quicabi.MSG_QUIC_STREAM_FIN
	}
	k.inbox = append(k.inbox, fakeMsg{data: []byte(data), stream: id, flags: f})
	k.notify()
}

// event queues an event notification.
func (k *fakeKernel) event(t quicabi.EventType, payload []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.inbox = append(k.inbox, fakeMsg{data: append([]byte{byte(t)}, payload...), stream: -1, rflags: quicabi.MSG_QUIC_NOTIFICATION | unix.MSG_EOR})
	k.notify()
}

// peerClose ends the connection as the peer's CONNECTION_CLOSE does.
func (k *fakeKernel) peerClose(cc quicabi.ConnectionClose) {
	k.event(quicabi.QUIC_EVENT_CONNECTION_CLOSE, cc.Marshal())
	k.mu.Lock()
	k.gone, k.close = true, cc
	k.notify()
	k.mu.Unlock()
}

func (k *fakeKernel) setFull(full bool) {
	k.mu.Lock()
	k.full = full
	k.notify()
	k.mu.Unlock()
}

func (k *fakeKernel) Recv(p, oob []byte, flags int, wait <-chan struct{}) (int, int, int, error) {
	for {
		k.mu.Lock()
		if len(k.inbox) > 0 {
			m := &k.inbox[0]
			n := copy(p, m.data)
			rflags := m.rflags
			oobn := 0
			if m.stream >= 0 {
				oobn = copy(oob, quicabi.StreamInfoCmsg(m.stream, 0))
			}
			if n < len(m.data) {
				m.data = m.data[n:]
				if rflags&unix.MSG_EOR != 0 {
					rflags &^= unix.MSG_EOR // the rest comes in the next call
				}
				if m.stream >= 0 {
					oobn = copy(oob, quicabi.StreamInfoCmsg(m.stream, 0))
				}
			} else {
				if m.stream >= 0 {
					oobn = copy(oob, quicabi.StreamInfoCmsg(m.stream, m.flags))
				}
				k.inbox = k.inbox[1:]
			}
			k.recvs++
			k.mu.Unlock()
			return n, oobn, rflags, nil
		}
		if k.gone {
			k.mu.Unlock()
			return 0, 0, 0, unix.ENOTCONN
		}
		ch := k.changed
		k.mu.Unlock()
		select {
		case <-ch:
		case <-wait:
			return 0, 0, 0, quicsock.ErrWaitEnded
		}
	}
}

func (k *fakeKernel) Send(p, oob []byte, flags int, wait <-chan struct{}) (int, error) {
	cm, err := quicabi.ParseCmsg(oob)
	for {
		k.mu.Lock()
		if k.gone {
			k.mu.Unlock()
			return 0, unix.EPIPE
		}
		if !k.full {
			if err != nil || !cm.HasStreamInfo {
				k.mu.Unlock()
				return len(p), nil // a datagram
			}
			id := cm.Stream.StreamID
			if k.sent[id] == nil {
				k.sent[id] = &bytes.Buffer{}
			}
			k.sent[id].Write(p)
			if cm.Stream.Flags&quicabi.MSG_QUIC_STREAM_FIN != 0 {
				k.fins[id] = true
			}
			k.notify()
			k.mu.Unlock()
			return len(p), nil
		}
		ch := k.changed
		k.mu.Unlock()
		if flags&unix.MSG_DONTWAIT != 0 {
			return 0, unix.EAGAIN
		}
		select {
		case <-ch:
		case <-wait:
			return 0, quicsock.ErrWaitEnded
		}
	}
}

func (k *fakeKernel) SetOption(opt int, b []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch opt {
	case quicabi.QUIC_SOCKOPT_STREAM_RESET:
		e, _ := quicabi.UnmarshalErrInfo(b)
		k.resets[e.StreamID] = e.ErrCode
	case quicabi.QUIC_SOCKOPT_STREAM_STOP_SENDING:
		e, _ := quicabi.UnmarshalErrInfo(b)
		k.stops[e.StreamID] = e.ErrCode
	}
	return nil
}

func (k *fakeKernel) GetOption(opt int, buf []byte) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch opt {
	case quicabi.QUIC_SOCKOPT_TRANSPORT_PARAM:
		if p, err := quicabi.UnmarshalTransportParam(buf); err == nil && !p.Remote {
			return k.local.Marshal(), nil
		}
		return quicabi.TransportParam{}.Marshal(), nil
	case quicabi.QUIC_SOCKOPT_CONNECTION_CLOSE:
		return k.close.Marshal(), nil
	case quicabi.QUIC_SOCKOPT_STREAM_OPEN:
		si, _ := quicabi.UnmarshalStreamInfo(buf)
		typ := 0 // client bidi
		if si.Flags&quicabi.MSG_QUIC_STREAM_UNI != 0 {
			typ = 2
		}
		id := k.nextID[typ]
		k.nextID[typ] += 4
		return quicabi.StreamInfo{StreamID: id}.Marshal(), nil
	case quicabi.QUIC_SOCKOPT_EVENT:
		return buf, nil
	}
	return nil, unix.ENOPROTOOPT
}

// sentOn returns what was written on stream id, and whether its FIN was.
func (k *fakeKernel) sentOn(id int64) (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if b := k.sent[id]; b != nil {
		return b.String(), k.fins[id]
	}
	return "", false
}

// pending returns how many messages recvmsg has not delivered yet.
func (k *fakeKernel) pending() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.inbox)
}
