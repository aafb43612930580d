//go:build linux

package conformance

import (
	"bytes"
	"context"
	"testing"
	"time"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// TestKquicTable runs every rule against kernel QUIC in both roles (in the
// guest with $KQUIC_MODULE). Kernel QUIC's answers are the module's to
// give: the test asserts that every rule ran (a handshake, the violation,
// an answer or the wait), that the table names them all, and logs it.
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
	if perRole[Server] < 40 || perRole[Client] < 40 {
		t.Errorf("%d rules as server, %d as client: want at least 40 each", perRole[Server], perRole[Client])
	}
}
