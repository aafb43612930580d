// Package udprelay is a UDP relay on loopback for tests: it forwards
// between one client and a server, and holds what the server sends while
// told to. A QUIC client that has none of the server's handshake flight
// cannot send its Finished, so a server's handshake cannot complete while
// the relay holds: a test can look at what a server does before it.
package udprelay

import (
	"net"
	"sync"
)

// Relay forwards datagrams between the client that sends to Addr and the
// server.
type Relay struct {
	front *net.UDPConn // the address the client dials
	back  *net.UDPConn // connected to the server

	mu     sync.Mutex
	client *net.UDPAddr
	hold   bool
	held   [][]byte
	wg     sync.WaitGroup
}

// New starts a relay to server on 127.0.0.1, holding what the server sends
// from the start if hold is set.
func New(server *net.UDPAddr, hold bool) (*Relay, error) {
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	back, err := net.DialUDP("udp", nil, server)
	if err != nil {
		front.Close()
		return nil, err
	}
	r := &Relay{front: front, back: back, hold: hold}
	r.wg.Add(2)
	go r.fromClient()
	go r.fromServer()
	return r, nil
}

func (r *Relay) fromClient() {
	defer r.wg.Done()
	b := make([]byte, 65536)
	for {
		n, from, err := r.front.ReadFromUDP(b)
		if err != nil {
			return
		}
		r.mu.Lock()
		r.client = from
		r.mu.Unlock()
		r.back.Write(b[:n])
	}
}

func (r *Relay) fromServer() {
	defer r.wg.Done()
	b := make([]byte, 65536)
	for {
		n, err := r.back.Read(b)
		if err != nil {
			return
		}
		r.mu.Lock()
		if r.hold || r.client == nil {
			r.held = append(r.held, append([]byte(nil), b[:n]...))
		} else {
			r.front.WriteToUDP(b[:n], r.client)
		}
		r.mu.Unlock()
	}
}

// Addr is the address a client dials.
func (r *Relay) Addr() *net.UDPAddr { return r.front.LocalAddr().(*net.UDPAddr) }

// Holding reports whether the relay holds what the server sends.
func (r *Relay) Holding() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hold
}

// Release sends the client what was held and stops holding.
func (r *Relay) Release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hold = false
	if r.client == nil {
		return
	}
	for _, b := range r.held {
		r.front.WriteToUDP(b, r.client)
	}
	r.held = nil
}

// Close stops the relay.
func (r *Relay) Close() error {
	r.front.Close()
	r.back.Close()
	r.wg.Wait()
	return nil
}
