//go:build linux

package vm

import (
	"testing"
	"time"
)

func TestTimeoutFor(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
		ok   bool
	}{
		{[]string{"/tmp/x.test", "-test.paniconexit0", "-test.timeout=25m0s"}, 25*time.Minute + BootMargin, true},
		{[]string{"/tmp/x.test", "-test.timeout", "90s", "-test.v"}, 90*time.Second + BootMargin, true},
		{[]string{"/tmp/x.test", "-test.timeout=0s"}, 0, false}, // disabled: keep the harness's limit
		{[]string{"/tmp/x.test", "-test.timeout=soon"}, 0, false},
		{[]string{"/tmp/x.test", "-test.timeout"}, 0, false},
		{[]string{"sh", "-c", "echo -test.timeout=5m"}, 0, false},
		{[]string{"sh", "-c", "true"}, 0, false},
	} {
		got, ok := TimeoutFor(tc.args)
		if got != tc.want || ok != tc.ok {
			t.Errorf("TimeoutFor(%q) = %v, %v; want %v, %v", tc.args, got, ok, tc.want, tc.ok)
		}
	}
}
