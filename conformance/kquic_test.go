//go:build linux

package conformance

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// silent03a9c7c are the rules lxin/quic 03a9c7c answers with nothing
// (every other gets the RFC's answer): kquic conformance's table for that
// build, in both roles unless the role is named.
var silent03a9c7c = map[string]bool{
	"ack-truncated": true, "crypto-buffer-exceeded": true, "data-past-final-size": true, "final-size-changed": true,
	"max-stream-data-not-yet-created": true, "new-connection-id-empty": true, "new-connection-id-too-long": true,
	"path-response-unsolicited": true, "reset-final-size-changed": true, "stop-sending-not-yet-created": true,
	"stream-truncated": true, "tp-max-streams-bidi-over-2^60": true, "tp-max-streams-uni-over-2^60": true,
	"max-data-in-initial/server": true, "stream-in-initial/server": true,
}

const build03a9c7c = "code:b90fe60cc0a8480fbe5fc55f33e6013e"

// TestKquicTable runs every rule against kernel QUIC in both roles (in the
// guest with $KQUIC_MODULE). It asserts that every rule ran (a handshake,
// the violation, an answer or the wait) and, on lxin/quic 03a9c7c's build,
// that the table is the one recorded for it: a change either way (the
// harness broken, or the module mended) fails and names the rule. On other
// builds it logs the table.
func TestKquicTable(t *testing.T) {
	testenv.Require(t, kmod.FeatureQUIC)
	target, err := Open("kquic")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Options{Target: target, Wait: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	rep.WriteTable(&table)
	t.Logf("kernel QUIC (%s):\n%s", testenv.ModuleBuild(), table.String())
	perRole := map[Role]int{}
	for _, r := range rep.Results {
		perRole[r.Role]++
		if r.Verdict == Failed {
			t.Errorf("%s as %s did not run: %s", r.Rule, r.Role, r.Answer.Error)
		}
	}
	if slices.Contains(testenv.ModuleBuilds(), build03a9c7c) {
		for _, r := range rep.Results {
			want := Agree
			if silent03a9c7c[r.Rule] || silent03a9c7c[r.Rule+"/"+string(r.Role)] {
				want = Silent
			}
			if r.Verdict != want {
				t.Errorf("%s as %s: %s (%s); lxin/quic 03a9c7c's recorded verdict is %s", r.Rule, r.Role, r.Verdict, r.Answer, want)
			}
		}
	}
	if perRole[Server] < 40 || perRole[Client] < 40 {
		t.Errorf("%d rules as server, %d as client: want at least 40 each", perRole[Server], perRole[Client])
	}
}
