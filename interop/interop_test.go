package interop

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kquic.dev/internal/racedetect"
	"kquic.dev/quicnet"
)

// hostCases are the cases the host part runs between quic-go, quicnet and
// ngtcp2 (issue: at least these).
// rebind-port is the guest pass's (TestKquicPairs): quic-go's answer to a
// rebinding varies from run to run (no PATH_CHALLENGE, or one whose
// response the trace does not see).
var hostCases = []string{"handshake", "transfer", "retry", "resumption", "zerortt", "http3", "keyupdate", "chacha20", "v2",
	"transferloss", "amplificationlimit", "ipv6"}

// hostExpected are the results that are not a pass, with why: anything else
// that does not pass fails the test.
var hostExpected = map[string]string{
	// ngtcp2's server turns down 0-RTT from crypto/tls clients (it takes
	// ngtcp2's own); quic-go's http3 client then fails the requests it sent
	// in 0-RTT instead of sending them again.
	"ngtcp2/quic-go/zerortt": "0-RTT rejected",
	"ngtcp2/quicnet/zerortt": "did not accept early data",
	// quic-go v0.65 sends no PATH_CHALLENGE when its client's address
	// changes (RFC 9000 §9.3 wants the new path validated): seen in the
	// trace, the files arrive regardless.
	"quic-go/quic-go/rebind-port": "no PATH_CHALLENGE", "quic-go/quicnet/rebind-port": "no PATH_CHALLENGE",
	"quicnet/quic-go/rebind-port": "no PATH_CHALLENGE", "quicnet/quicnet/rebind-port": "no PATH_CHALLENGE",
	"quic-go/ngtcp2/rebind-port": "no PATH_CHALLENGE", "quicnet/ngtcp2/rebind-port": "no PATH_CHALLENGE",
	// quic-go's server sends 3840 bytes after the 1254-byte first datagram
	// of ngtcp2's client: 3 × 1280, the datagram counted with its IPv4 and
	// UDP headers, where RFC 9000 §8 counts the UDP payload.
	"quic-go/ngtcp2/amplificationlimit": "3840 bytes", "quicnet/ngtcp2/amplificationlimit": "3840 bytes",
}

func cases(t *testing.T, names ...string) []*Case {
	var out []*Case
	for _, n := range names {
		c, err := CaseNamed(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

func TestHostMatrix(t *testing.T) {
	hostOnly(t)
	impls := []Impl{QuicGo{}, Quicnet{Impl: quicnet.QuicGo}}
	if ng, err := openNgtcp2(); err == nil {
		impls = append(impls, ng)
	} else {
		skipOrFailTools(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	o := Options{Servers: impls, Clients: impls, Cases: cases(t, hostCases...), Dir: t.TempDir(), Scale: 0.1, Timeout: 45 * time.Second}
	var early []Impl // the clients of zerortt
	if racedetect.Enabled {
		// quic-go's 0-RTT client races within quic-go (quic-go/quic-go#4303,
		// open), and the race detector fails the test on it: with it on,
		// zerortt has ngtcp2's client only.
		o.Cases = cases(t, slices.DeleteFunc(slices.Clone(hostCases), func(c string) bool { return c == "zerortt" })...)
		early = impls[2:]
	}
	res, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(early) > 0 {
		o.Clients, o.Cases = early, cases(t, "zerortt")
		more, err := Run(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, more...)
	}
	var b strings.Builder
	WriteMatrix(&b, res)
	t.Logf("\n%s", b.String())
	path := filepath.Join(t.TempDir(), "interop.json")
	if err := (&Document{Schema: Schema, Results: res}).Save(path); err != nil {
		t.Fatal(err)
	}
	if d, err := LoadDocument(path); err != nil || len(d.Results) != len(res) {
		t.Fatalf("LoadDocument: %v", err)
	}
	ran := map[string]int{}
	for _, r := range res {
		key := r.Server + "/" + r.Client + "/" + r.Case
		switch {
		case r.Status == Pass:
			ran[r.Case]++
		case r.Status == Unsupported && r.Reason != "":
		case hostExpected[key] != "" && strings.Contains(r.Reason, hostExpected[key]):
		default:
			t.Errorf("%s (client %s, server %s): %s: %s; checks %v", r.Case, r.Client, r.Server, r.Status, r.Reason, r.Checks)
		}
	}
	for _, c := range hostCases {
		if ran[c] == 0 {
			t.Errorf("no pair passed %s", c)
		}
	}
}

// skipOrFailTools is testenv.Tool's verdict for a missing program, without
// importing testenv (Linux-only) into this portable test.
func skipOrFailTools(t *testing.T, err error) {
	t.Helper()
	for _, f := range strings.Split(os.Getenv("KQUIC_REQUIRE"), ",") {
		if strings.TrimSpace(f) == "tools" {
			t.Fatalf("required by $KQUIC_REQUIRE but absent: %v", err)
		}
	}
	t.Skip(err)
}

// recorded runs a case and returns its trace, for the tests that judge a
// trace by another case's checks.
func recorded(t *testing.T, server, client Impl, name string, mod func(*Case)) *outcome {
	t.Helper()
	c := *cases(t, name)[0]
	c.Checks = nil
	if mod != nil {
		mod(&c)
	}
	alpn, err := pickALPN(&c, server, client)
	if err != nil {
		t.Fatal(err)
	}
	o, err := runCase(context.Background(), Options{Scale: 0.1, Timeout: 30 * time.Second}, server, client, &c, alpn, t.TempDir())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return o
}

// Every check fails on an exchange that breaks it, naming itself.
func TestChecksCanFail(t *testing.T) {
	hostOnly(t)
	plain := recorded(t, QuicGo{}, QuicGo{}, "transfer", nil)
	small := recorded(t, QuicGo{}, QuicGo{}, "handshake", nil) // too few packets for quic-go's own key update
	v2 := recorded(t, QuicGo{}, QuicGo{}, "v2", nil)
	resumed := recorded(t, QuicGo{}, QuicGo{}, "resumption", nil)
	multi := recorded(t, QuicGo{}, QuicGo{}, "handshake", func(c *Case) { c.Files, c.MultiConnect = []int{kB, kB}, true })
	noKeys := *plain.Outcome
	noKeys.Trace = Analyze(nil, nil)
	for _, tc := range []struct {
		check string
		o     *Outcome
		want  string
	}{
		{"retry", plain.Outcome, "no Retry packet"},
		{"resumption", plain.Outcome, "1 handshakes, want 2"},
		{"zerortt", resumed.Outcome, "no 0-RTT packet"},
		{"keyupdate", small.Outcome, "no key phase change"},
		{"chacha20", plain.Outcome, "not TLS_CHACHA20_POLY1305_SHA256"},
		{"v2", plain.Outcome, "no version 2 packet"},
		{"handshake", v2.Outcome, "version 0x6b3343cf"},
		{"handshake", multi.Outcome, "2 handshakes on the wire, want 1"},
		{"ipv6", plain.Outcome, "not IPv6"},
		{"rebind-port", plain.Outcome, "no rebinding happened"},
		{"transfer", &noKeys, "0 handshakes"},
	} {
		c := cases(t, tc.check)[0]
		err := Judge(c, tc.o.Trace, tc.o.Server)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s's checks on another case's exchange: %v, want an error with %q", tc.check, err, tc.want)
		}
	}
	// A full handshake where a resumed one is due.
	if ng, err := openNgtcp2(); err == nil {
		full := recorded(t, QuicGo{}, ng, "resumption", func(c *Case) { c.Resumption, c.MultiConnect = false, true })
		if err := Judge(cases(t, "resumption")[0], full.Trace, full.Server); err == nil || !strings.Contains(err.Error(), "carries a Certificate") {
			t.Errorf("two full handshakes judged as a resumption: %v", err)
		}
	}
}
