package conformance

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kquic.dev/internal/quicwire"
)

// quicGoAnswers are quic-go v0.65's answers where they are not the RFC's
// first choice; every other rule must get exactly that.
var quicGoAnswers = map[string]string{
	// quic-go has no DATAGRAM frame unless enabled: an unknown frame type.
	"datagram-not-negotiated": "FRAME_ENCODING_ERROR",
	// A frame in a packet type that may not carry it: quic-go's frame
	// parser reports FRAME_ENCODING_ERROR where §12.4 says PROTOCOL_VIOLATION.
	"stream-in-initial": "FRAME_ENCODING_ERROR", "max-data-in-initial": "FRAME_ENCODING_ERROR",
	"stream-in-handshake": "FRAME_ENCODING_ERROR", "new-connection-id-in-handshake": "FRAME_ENCODING_ERROR",
	"handshake-done-in-handshake": "FRAME_ENCODING_ERROR",
	// Transport parameters refused inside the TLS handshake go out as
	// INTERNAL_ERROR, the reason naming TRANSPORT_PARAMETER_ERROR; those
	// it checks after the handshake go out with the right code.
	"tp-ack-delay-exponent-over-20": "INTERNAL_ERROR", "tp-max-ack-delay-2^14": "INTERNAL_ERROR",
	"tp-max-udp-payload-below-1200": "INTERNAL_ERROR", "tp-active-cid-limit-below-2": "INTERNAL_ERROR",
	"tp-max-streams-bidi-over-2^60": "INTERNAL_ERROR", "tp-max-streams-uni-over-2^60": "INTERNAL_ERROR",
	"tp-value-not-a-varint": "INTERNAL_ERROR", "tp-duplicate": "INTERNAL_ERROR", "tp-no-initial-source-cid": "INTERNAL_ERROR",
	"tp-client-original-dcid": "INTERNAL_ERROR", "tp-client-stateless-reset-token": "INTERNAL_ERROR",
	"tp-client-preferred-address": "INTERNAL_ERROR", "tp-client-retry-source-cid": "INTERNAL_ERROR",
	"tp-server-no-original-dcid": "INTERNAL_ERROR", "tp-server-reset-token-length": "INTERNAL_ERROR",
}

// TestQuicGoTable: every rule in both roles against quic-go gets the
// answer quic-go is known to give: the RFC's, save for the deviations
// listed. A harness that sent the wrong frames would change answers here.
func TestQuicGoTable(t *testing.T) {
	hostOnly(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Options{Target: QuicGo{}, Wait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	rep.WriteTable(&table)
	perRole := map[Role]int{}
	for _, r := range rep.Results {
		perRole[r.Role]++
		want, deviates := quicGoAnswers[r.Rule]
		got := quicwire.TransportError(r.Answer.Code).String()
		switch {
		case !deviates && r.Verdict != Agree:
			t.Errorf("%s as %s: quic-go answered %s (%s), want %s", r.Rule, r.Role, r.Answer, r.Verdict, strings.Join(r.Want, " or "))
		case deviates && (!r.Answer.Closed || r.Answer.App || got != want):
			t.Errorf("%s as %s: quic-go answered %s (%s), want its known %s", r.Rule, r.Role, r.Answer, r.Verdict, want)
		}
	}
	if perRole[Server] < 40 || perRole[Client] < 40 {
		t.Errorf("%d rules as server, %d as client: want at least 40 each", perRole[Server], perRole[Client])
	}
	if t.Failed() {
		t.Logf("the table:\n%s", table.String())
	}
	// The file round-trips.
	path := filepath.Join(t.TempDir(), "c.json")
	if err := rep.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil || len(back.Results) != len(rep.Results) || back.Count(Agree) != rep.Count(Agree) {
		t.Fatalf("Load: %v", err)
	}
}

// The verdicts can fail: a rule whose frames are valid meets silence, and a
// rule that wants another code than the one given reads as differing.
func TestVerdictsCanFail(t *testing.T) {
	hostOnly(t)
	valid := Rule{Name: "valid-ping", Section: "-", Level: Must, Want: want(pvErr),
		Send: frames(func(*Session) []quicwire.Frame { return []quicwire.Frame{quicwire.Ping{}} })}
	validParam := Rule{Name: "valid-param", Section: "-", Level: Must, Want: want(tpErr),
		Config: params(vp(quicwire.ParamAckDelayExponent, 20))}
	wrong := ruleNamed(t, "stream-on-send-only")
	wrong.Name, wrong.Want = "wrong-want", want(fcErr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := Run(ctx, Options{Target: QuicGo{}, Rules: []Rule{valid, validParam, wrong}, Wait: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rep.Results {
		got[r.Rule+"/"+string(r.Role)] = r.Verdict
	}
	for _, role := range []string{"server", "client"} {
		for rule, v := range map[string]string{"valid-ping": Silent, "valid-param": Silent, "wrong-want": Differs} {
			if got[rule+"/"+role] != v {
				t.Errorf("%s as %s: %q, want %q", rule, role, got[rule+"/"+role], v)
			}
		}
	}
	var b bytes.Buffer
	rep.WriteTable(&b)
	if !strings.Contains(b.String(), "NO (silent)") || !strings.Contains(b.String(), "NO (differs)") {
		t.Errorf("the table does not show the failures:\n%s", b.String())
	}
}

func ruleNamed(t *testing.T, name string) Rule {
	for _, r := range Rules {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no rule %s", name)
	return Rule{}
}

func TestRuleTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules {
		if seen[r.Name] {
			t.Errorf("rule %s twice", r.Name)
		}
		seen[r.Name] = true
		if r.Section == "" || r.Level == "" || r.Text == "" || len(r.Want) == 0 || (r.Send == nil && r.Config == nil) {
			t.Errorf("rule %s is incomplete: %+v", r.Name, r)
		}
	}
	if _, err := selectRules(nil, []string{"no-such-*"}); err == nil {
		t.Error("a pattern that matches nothing is not an error")
	}
	if rs, err := selectRules(nil, []string{"tp-*"}); err != nil || len(rs) < 10 {
		t.Errorf("tp-*: %d rules, %v", len(rs), err)
	}
}
