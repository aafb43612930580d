package knownbugs

import (
	"strings"
	"testing"
)

func TestListIsWellFormed(t *testing.T) {
	ids := map[string]bool{}
	for _, b := range All {
		if b.ID == "" || ids[b.ID] || b.What == "" || b.Test == "" || len(b.SeenOn) == 0 {
			t.Errorf("bug %q: want a unique ID, What, Test and SeenOn: %+v", b.ID, b)
		}
		ids[b.ID] = true
		if ByID(b.ID) != b {
			t.Errorf("ByID(%q) is not the listed bug", b.ID)
		}
		for _, s := range b.SeenOn {
			if !strings.HasPrefix(s, "code:") && !strings.HasPrefix(s, "lxin/quic@") && !strings.HasPrefix(s, "build-id:") {
				t.Errorf("bug %s: build %q is in none of Builds' forms", b.ID, s)
			}
		}
	}
}

// Match reads the signs: the case, which end is the kernel, the reason, the
// log; and tells a build that has the bug from one not known to.
func TestMatch(t *testing.T) {
	zerortt := Failure{Case: "zerortt", KernelClient: true, Reason: "the client failed: connection 2: /f2: kquic: open stream: invalid argument"}
	for _, tc := range []struct {
		name   string
		f      Failure
		builds []string
		want   *Bug
		on     bool
	}{
		{"listed build", zerortt, []string{"build-id:x", Build03a9c7c}, &EarlyStreamID, true},
		{"another build", zerortt, []string{"code:0123"}, &EarlyStreamID, false},
		{"no build known", zerortt, nil, &EarlyStreamID, false},
		{"another case", Failure{Case: "handshake", KernelClient: true, Reason: zerortt.Reason}, []string{Build03a9c7c}, nil, false},
		{"the kernel serves", Failure{Case: "zerortt", KernelServer: true, Reason: zerortt.Reason}, []string{Build03a9c7c}, nil, false},
		{"no kernel end", Failure{Case: "zerortt", Reason: zerortt.Reason}, []string{Build03a9c7c}, nil, false},
		{"another reason", Failure{Case: "zerortt", KernelClient: true, Reason: "0-RTT: no 0-RTT packet"}, []string{Build03a9c7c}, nil, false},
	} {
		got, on := Match(tc.f, tc.builds)
		if got != tc.want || on != tc.on {
			t.Errorf("%s: Match = %v, %v; want %v, %v", tc.name, id(got), on, id(tc.want), tc.on)
		}
	}
	// A sign naming the peer holds with that peer only.
	large := Failure{Case: "http3", Server: "quic-go", Client: "kquic", KernelClient: true, Reason: "dial: no answer from the server to our ClientHello within 10s"}
	if got, on := Match(large, []string{Build03a9c7c}); got != &LargeFirstInitial || !on {
		t.Errorf("a kernel client unanswered by quic-go: %v, %v", id(got), on)
	}
	large.Server = "ngtcp2"
	if got, _ := Match(large, []string{Build03a9c7c}); got != nil {
		t.Errorf("a kernel client unanswered by ngtcp2: %v, want no known bug", id(got))
	}
	// A sign on the kernel log holds only with the line.
	s := Sign{Kernel: "server", Log: "quic_outq"}
	f := Failure{KernelServer: true, Log: []string{"WARNING: CPU: 0 PID: 1 at net/quic/outqueue.c:10 quic_outq_transmit+0x1/0x2 [quic]"}}
	if !s.holds(f) {
		t.Error("a sign on the kernel log does not hold with the line there")
	}
	f.Log = nil
	if s.holds(f) {
		t.Error("a sign on the kernel log holds without the line")
	}
}

func id(b *Bug) string {
	if b == nil {
		return "<nil>"
	}
	return b.ID
}

func TestCodeHash(t *testing.T) {
	if got := CodeHash([]string{"build-id:ab", Commit03a9c7c, Build03a9c7c}); got != Build03a9c7c {
		t.Errorf("CodeHash = %q", got)
	}
	if got := CodeHash([]string{"sha256:00"}); got != "" {
		t.Errorf("CodeHash without one = %q", got)
	}
}
