package interop

import (
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"time"

	"kquic.dev/internal/quicwire"
)

// Case is one of the runner's test cases: what it sets up and what it checks.
type Case struct {
	// Name is the runner's (testcases.py); Abbrev its letter(s) in the
	// interop.seemann.io matrix.
	Name, Abbrev string
	ALPN         string
	// Files are the sizes of the files the client fetches.
	Files []int
	// IPv6 runs the case over ::1.
	IPv6 bool
	// Impair is what the relay does.
	Impair Impairment
	// Server and client features the case needs.
	Retry, Resumption, ZeroRTT, MultiConnect, KeyUpdate, ChaCha20, Version2 bool
	// BigCert makes the server's certificate chain large (amplificationlimit).
	BigCert bool
	// Measure: the case's figure is its goodput (goodput).
	Measure bool
	// Timeout, if longer than Options.Timeout, bounds the case instead
	// (the runner's own: 300 s for the lossy handshakes of 50 connections).
	Timeout time.Duration
	// Unsupported, if set, says why no pair can run the case here.
	Unsupported string
	// Checks judge the outcome, after the files.
	Checks []Check
}

// Check is one named test of a case's outcome.
type Check struct {
	Name string
	Fn   func(o *Outcome) error
}

// Outcome is what a case run left for the checks.
type Outcome struct {
	Case   *Case
	Trace  *Trace
	Server *net.UDPAddr
	// Took is the client's run time.
	Took time.Duration
}

const (
	kB = 1 << 10
	mB = 1 << 20
)

func handshakes(n int) Check {
	return Check{"handshakes", func(o *Outcome) error {
		if got := len(o.Trace.Conns); got != n {
			return fmt.Errorf("%d handshakes on the wire, want %d", got, n)
		}
		return nil
	}}
}

// handshakesPerFile: one connection per file (multiconnect).
var handshakesPerFile = Check{"handshakes", func(o *Outcome) error {
	if got := len(o.Trace.Conns); got != len(o.Case.Files) {
		return fmt.Errorf("%d handshakes on the wire, want one per file (%d)", got, len(o.Case.Files))
	}
	return nil
}}

func versionOnly(v uint32) Check {
	return Check{fmt.Sprintf("version 0x%x only", v), func(o *Outcome) error {
		for _, c := range o.Trace.Conns {
			for d := range c.Versions {
				for got := range c.Versions[d] {
					if got != v {
						return fmt.Errorf("a %s long header of version 0x%x (%s)", Dir(d), got, c)
					}
				}
			}
		}
		return nil
	}}
}

var decrypted = Check{"decrypted", func(o *Outcome) error {
	for _, c := range o.Trace.Conns {
		if c.OneRTT[ToServer] == 0 || c.OneRTT[ToClient] == 0 {
			return fmt.Errorf("no 1-RTT packet decrypted one way or the other (is the key log complete?): %s", c)
		}
	}
	return nil
}}

var retrySeen = Check{"retry", func(o *Outcome) error {
	if len(o.Trace.Conns) == 0 || !o.Trace.Conns[0].Retry {
		return fmt.Errorf("no Retry packet from the server")
	}
	if !o.Trace.Conns[0].TokenEchoed {
		return fmt.Errorf("the client's Initial after the Retry does not carry its token")
	}
	return nil
}}

var resumed = Check{"resumed", func(o *Outcome) error {
	cs := o.Trace.Conns
	if len(cs) != 2 {
		return fmt.Errorf("%d handshakes, want 2", len(cs))
	}
	if !cs[0].Certificate {
		return fmt.Errorf("the first handshake has no Certificate (server messages %v)", cs[0].ServerMsgs)
	}
	if cs[1].Certificate {
		return fmt.Errorf("the second handshake carries a Certificate: it was not resumed (server messages %v)", cs[1].ServerMsgs)
	}
	return nil
}}

var zeroRTTUsed = Check{"0-RTT", func(o *Outcome) error {
	cs := o.Trace.Conns
	if len(cs) != 2 {
		return fmt.Errorf("%d handshakes, want 2", len(cs))
	}
	if cs[1].ZeroRTTOnWire == 0 {
		return fmt.Errorf("the second connection sent no 0-RTT packet")
	}
	if !cs[1].EarlyAccepted {
		return fmt.Errorf("the server's EncryptedExtensions did not accept early data (%d 0-RTT packets sent)", cs[1].ZeroRTTOnWire)
	}
	if cs[1].ZeroRTTPackets > 0 && cs[1].ZeroRTTStreamBytes == 0 {
		return fmt.Errorf("the 0-RTT packets (%d decrypted) carry no request", cs[1].ZeroRTTPackets)
	}
	return nil
}}

var keyUpdated = Check{"key update", func(o *Outcome) error {
	for _, c := range o.Trace.Conns {
		if c.KeyPhase1[ToServer] > 0 && c.KeyPhase1[ToClient] > 0 {
			return nil
		}
	}
	return fmt.Errorf("no key phase change in both directions: %v", o.Trace.Conns)
}}

var chachaOnly = Check{"ChaCha20", func(o *Outcome) error {
	for _, c := range o.Trace.Conns {
		if c.Suite != tls.TLS_CHACHA20_POLY1305_SHA256 {
			return fmt.Errorf("the server chose 0x%04x, not TLS_CHACHA20_POLY1305_SHA256", c.Suite)
		}
		for _, s := range c.OfferedSuites {
			if s != tls.TLS_CHACHA20_POLY1305_SHA256 {
				return fmt.Errorf("the client offered 0x%04x beside ChaCha20 (offered %04x)", s, c.OfferedSuites)
			}
		}
	}
	return nil
}}

var v2Used = Check{"version 2", func(o *Outcome) error {
	for _, c := range o.Trace.Conns {
		if c.Versions[ToClient][quicwire.Version2] == 0 {
			return fmt.Errorf("the server sent no version 2 packet (versions %v)", c.Versions[ToClient])
		}
	}
	return nil
}}

var overIPv6 = Check{"IPv6", func(o *Outcome) error {
	if o.Server == nil || o.Server.IP.To4() != nil {
		return fmt.Errorf("the server listened on %v, not IPv6", o.Server)
	}
	return nil
}}

var amplification = Check{"amplification limit", func(o *Outcome) error {
	for _, c := range o.Trace.Conns {
		if c.SentBeforeValid > 3*c.RecvBeforeValid {
			return fmt.Errorf("the server sent %d bytes before it validated the client's address, over 3 × the %d it received", c.SentBeforeValid, c.RecvBeforeValid)
		}
	}
	return nil
}}

var pathValidated = Check{"path validation", func(o *Outcome) error {
	for _, c := range o.Trace.Conns {
		if len(c.Paths) < 2 {
			return fmt.Errorf("the client's packets came by one path only: no rebinding happened (%s)", c)
		}
		if c.PathChallenges[ToClient] == 0 {
			return fmt.Errorf("the server sent no PATH_CHALLENGE after the client's address changed")
		}
		if c.PathResponses[ToServer] == 0 {
			return fmt.Errorf("the client sent no PATH_RESPONSE")
		}
	}
	return nil
}}

// Cases are the runner's cases, in its order.
var Cases = []*Case{
	{Name: "handshake", Abbrev: "H", ALPN: HQ, Files: []int{kB}, Checks: []Check{handshakes(1), versionOnly(quicwire.Version1), decrypted}},
	{Name: "transfer", Abbrev: "D", ALPN: HQ, Files: []int{2 * mB, 3 * mB, 5 * mB}, Checks: []Check{handshakes(1), decrypted}},
	{Name: "longrtt", Abbrev: "LR", ALPN: HQ, Files: []int{mB}, Impair: Impairment{Delay: 750 * time.Millisecond}, Checks: []Check{handshakes(1)}},
	{Name: "chacha20", Abbrev: "C20", ALPN: HQ, Files: []int{3 * mB}, ChaCha20: true, Checks: []Check{handshakes(1), chachaOnly, decrypted}},
	{Name: "multiplexing", Abbrev: "M", ALPN: HQ, Files: repeat(2000, 32), Checks: []Check{handshakes(1)}},
	{Name: "retry", Abbrev: "S", ALPN: HQ, Files: []int{10 * kB}, Retry: true, Checks: []Check{handshakes(1), retrySeen}},
	{Name: "resumption", Abbrev: "R", ALPN: HQ, Files: []int{5 * kB, 10 * kB}, Resumption: true, Checks: []Check{resumed}},
	{Name: "zerortt", Abbrev: "Z", ALPN: HQ, Files: []int{5 * kB, 10 * kB, 10 * kB}, Resumption: true, ZeroRTT: true, Checks: []Check{zeroRTTUsed}},
	{Name: "http3", Abbrev: "3", ALPN: H3, Files: []int{5 * kB, 10 * kB, 500 * kB}, Checks: []Check{handshakes(1), decrypted}},
	{Name: "multiconnect", Abbrev: "MC", ALPN: HQ, Files: repeat(10, kB), MultiConnect: true, Impair: Impairment{Drop: 0.3, DropFirst: 10}, Checks: []Check{handshakesPerFile}},
	{Name: "v2", Abbrev: "V2", ALPN: HQ, Files: []int{kB}, Version2: true, Checks: []Check{handshakes(1), v2Used}},
	{Name: "ipv6", Abbrev: "6", ALPN: HQ, Files: []int{5 * kB, 10 * kB}, IPv6: true, Checks: []Check{handshakes(1), overIPv6}},
	{Name: "handshakeloss", Abbrev: "L1", ALPN: HQ, Files: repeat(20, kB), MultiConnect: true, Impair: Impairment{Drop: 0.3, DropFirst: 10}, Timeout: 300 * time.Second, Checks: []Check{handshakesPerFile}},
	{Name: "transferloss", Abbrev: "L2", ALPN: HQ, Files: []int{mB, mB / 2}, Impair: Impairment{Drop: 0.02}, Checks: []Check{handshakes(1)}},
	{Name: "handshakecorruption", Abbrev: "C1", ALPN: HQ, Files: repeat(20, kB), MultiConnect: true, Impair: Impairment{Corrupt: 0.3, CorruptFirst: 10}, Timeout: 300 * time.Second, Checks: []Check{handshakesPerFile}},
	{Name: "transfercorruption", Abbrev: "C2", ALPN: HQ, Files: []int{mB, mB / 2}, Impair: Impairment{Corrupt: 0.02}, Checks: []Check{handshakes(1)}},
	{Name: "blackhole", Abbrev: "B", ALPN: HQ, Files: []int{5 * mB}, Impair: Impairment{BlackholeAfter: mB, BlackholeFor: 2 * time.Second}, Checks: []Check{handshakes(1)}},
	{Name: "keyupdate", Abbrev: "U", ALPN: HQ, Files: []int{3 * mB}, KeyUpdate: true, Checks: []Check{handshakes(1), keyUpdated}},
	{Name: "amplificationlimit", Abbrev: "A", ALPN: HQ, Files: []int{5 * kB}, BigCert: true, Checks: []Check{handshakes(1), amplification}},
	{Name: "rebind-port", Abbrev: "BP", ALPN: HQ, Files: []int{3 * mB}, Impair: Impairment{RebindAfter: mB}, Checks: []Check{handshakes(1), pathValidated}},
	{Name: "rebind-addr", Abbrev: "BA", ALPN: HQ, Files: []int{3 * mB}, Impair: Impairment{RebindAfter: mB, RebindAddr: "127.0.0.2"}, Checks: []Check{handshakes(1), pathValidated}},
	{Name: "connectionmigration", Abbrev: "CM", ALPN: HQ, Unsupported: "the server's preferred_address (a second listening address) is not set up by this runner yet"},
	{Name: "ecn", Abbrev: "E", ALPN: HQ, Unsupported: "the relay forwards UDP payloads: ECN marks in IP headers are not seen"},
	{Name: "goodput", Abbrev: "G", ALPN: HQ, Files: []int{10 * mB}, Measure: true, Checks: []Check{handshakes(1)}},
	{Name: "crosstraffic", Abbrev: "Q", ALPN: HQ, Unsupported: "needs competing TCP traffic through a bottleneck link, which the relay does not model"},
}

func repeat(n, size int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = size
	}
	return out
}

// CaseNamed returns the case of that name.
func CaseNamed(name string) (*Case, error) {
	var names []string
	for _, c := range Cases {
		if c.Name == name {
			return c, nil
		}
		names = append(names, c.Name)
	}
	return nil, fmt.Errorf("interop: no case %q (there are: %s)", name, strings.Join(names, ", "))
}
