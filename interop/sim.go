package interop

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Dir is a datagram's direction through the relay.
type Dir int

// Directions.
const (
	ToServer Dir = iota
	ToClient
)

func (d Dir) String() string {
	if d == ToServer {
		return "client→server"
	}
	return "server→client"
}

// Record is one datagram the relay saw.
type Record struct {
	Time time.Time
	Dir  Dir
	Data []byte
	// Dropped: the relay did not forward it; Corrupted: it forwarded it
	// with a byte changed (Data is what it forwarded).
	Dropped, Corrupted bool
	// Path numbers the relay's server-facing socket it went through (0,
	// then 1 after a rebinding, ...).
	Path int
	// Flow numbers the client address it came from or went to: a client
	// whose connection IDs are empty is told apart by it.
	Flow int
}

// Impairment says what the relay does to the traffic. Rates are per
// datagram, in each direction.
type Impairment struct {
	// Drop and Corrupt are probabilities (0 to 1); DropFirst and
	// CorruptFirst limit them to the first N datagrams of each direction
	// of each client (handshake cases).
	Drop, Corrupt           float64
	DropFirst, CorruptFirst int
	// Delay is added to every datagram, each way (longrtt).
	Delay time.Duration
	// Blackhole drops everything for BlackholeFor once BlackholeAfter
	// bytes went to the client.
	BlackholeAfter int
	BlackholeFor   time.Duration
	// RebindAfter moves the relay's server-facing socket to a new port
	// (and, with RebindAddr, a new address) once that many bytes went to
	// the client: the server sees its client behind a NAT that rebinds.
	RebindAfter int
	RebindAddr  string
	// Seed makes the random choices repeatable.
	Seed uint64
}

// Relay forwards datagrams between clients and one server.
type Relay struct {
	imp    Impairment
	server *net.UDPAddr
	front  *net.UDPConn

	mu       sync.Mutex
	rng      *rand.Rand
	records  []Record
	flows    map[string]*flow
	toClient int
	holeEnd  time.Time
	closed   bool
	wg       sync.WaitGroup
}

type flow struct {
	client  *net.UDPAddr
	id      int
	back    *net.UDPConn
	path    int
	counts  [2]int
	rebound bool
	// delayed holds each direction's delayed datagrams, in order (longrtt):
	// a timer each would let two datagrams due at once swap.
	delayed [2]chan delayed
}

// delayed is a datagram held for the link's delay.
type delayed struct {
	due  time.Time
	send func()
}

// maxDelayed bounds the datagrams a direction holds; past it the relay
// drops them, as a full router queue would.
const maxDelayed = 4096

// MaxRecords bounds what a relay keeps: past it, datagrams are still
// forwarded but not recorded, and the checks say the trace is incomplete.
const MaxRecords = 1 << 18

// NewRelay starts a relay on the loopback address of server's family.
func NewRelay(server *net.UDPAddr, imp Impairment) (*Relay, error) {
	laddr := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
	if server.IP.To4() == nil {
		laddr = &net.UDPAddr{IP: net.IPv6loopback}
	}
	front, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return nil, fmt.Errorf("interop: relay: %w", err)
	}
	r := &Relay{imp: imp, server: server, front: front, rng: rand.New(rand.NewPCG(imp.Seed, 0x1e1a7)), flows: map[string]*flow{}}
	r.wg.Add(1)
	go r.fromClients()
	return r, nil
}

// Addr is where clients send.
func (r *Relay) Addr() *net.UDPAddr { return r.front.LocalAddr().(*net.UDPAddr) }

// Records are the datagrams seen so far, in order.
func (r *Relay) Records() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Record(nil), r.records...)
}

// Close stops the relay.
func (r *Relay) Close() error {
	r.mu.Lock()
	r.closed = true
	for _, f := range r.flows {
		f.back.Close()
		for _, q := range f.delayed {
			if q != nil {
				close(q)
			}
		}
	}
	r.mu.Unlock()
	r.front.Close()
	r.wg.Wait()
	return nil
}

func (r *Relay) fromClients() {
	defer r.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, from, err := r.front.ReadFromUDP(buf)
		if err != nil {
			return
		}
		f, err := r.flowFor(from)
		if err != nil {
			continue
		}
		r.pass(f, ToServer, append([]byte(nil), buf[:n]...))
	}
}

func (r *Relay) flowFor(client *net.UDPAddr) (*flow, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("closed")
	}
	if f := r.flows[client.String()]; f != nil {
		return f, nil
	}
	back, err := r.listenBack("")
	if err != nil {
		return nil, err
	}
	f := &flow{client: client, back: back, id: len(r.flows)}
	r.flows[client.String()] = f
	r.wg.Add(1)
	go r.fromServer(f, back, 0)
	return f, nil
}

func (r *Relay) listenBack(addr string) (*net.UDPConn, error) {
	ip := r.front.LocalAddr().(*net.UDPAddr).IP
	if addr != "" {
		ip = net.ParseIP(addr)
	}
	return net.ListenUDP("udp", &net.UDPAddr{IP: ip})
}

func (r *Relay) fromServer(f *flow, back *net.UDPConn, path int) {
	defer r.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, _, err := back.ReadFromUDP(buf)
		if err != nil {
			return
		}
		r.pass(f, ToClient, append([]byte(nil), buf[:n]...))
	}
}

// pass applies the impairment to one datagram, records it and forwards it.
func (r *Relay) pass(f *flow, d Dir, b []byte) {
	r.mu.Lock()
	now := time.Now()
	f.counts[d]++
	rec := Record{Time: now, Dir: d, Path: f.path, Flow: f.id}
	imp := r.imp
	switch {
	case now.Before(r.holeEnd):
		rec.Dropped = true
	case imp.Drop > 0 && (imp.DropFirst == 0 || f.counts[d] <= imp.DropFirst) && r.rng.Float64() < imp.Drop:
		rec.Dropped = true
	case imp.Corrupt > 0 && (imp.CorruptFirst == 0 || f.counts[d] <= imp.CorruptFirst) && r.rng.Float64() < imp.Corrupt:
		i := r.rng.IntN(len(b))
		b[i] ^= byte(1 + r.rng.IntN(255))
		rec.Corrupted = true
	}
	if d == ToClient && !rec.Dropped {
		before := r.toClient
		r.toClient += len(b)
		if imp.BlackholeFor > 0 && before < imp.BlackholeAfter && r.toClient >= imp.BlackholeAfter {
			r.holeEnd = now.Add(imp.BlackholeFor)
		}
		if imp.RebindAfter > 0 && !f.rebound && r.toClient >= imp.RebindAfter {
			if nb, err := r.listenBack(imp.RebindAddr); err == nil {
				f.rebound = true
				old := f.back
				f.back, f.path = nb, f.path+1
				r.wg.Add(1)
				go r.fromServer(f, nb, f.path)
				// The old binding stays open a moment for what is in
				// flight to it, as a NAT's old mapping would drop it.
				time.AfterFunc(200*time.Millisecond, func() { old.Close() })
			}
		}
	}
	rec.Data = b
	if len(r.records) < MaxRecords {
		r.records = append(r.records, rec)
	}
	back, server, client := f.back, r.server, f.client
	r.mu.Unlock()
	if rec.Dropped {
		return
	}
	send := func() {
		if d == ToServer {
			back.WriteToUDP(b, server)
		} else {
			r.front.WriteToUDP(b, client)
		}
	}
	if imp.Delay > 0 {
		r.delay(f, d, delayed{due: now.Add(imp.Delay), send: send})
		return
	}
	send()
}

// delay queues a datagram behind the others of its direction, sent when
// due, in the order they came.
func (r *Relay) delay(f *flow, d Dir, x delayed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if f.delayed[d] == nil {
		q := make(chan delayed, maxDelayed)
		f.delayed[d] = q
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for x := range q {
				// The emulated link's delay: each datagram waits until due.
				time.Sleep(time.Until(x.due))
				x.send()
			}
		}()
	}
	select {
	case f.delayed[d] <- x:
	default: // full: dropped, as by a full queue
	}
}
