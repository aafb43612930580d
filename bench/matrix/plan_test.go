package matrix_test

import (
	"testing"
	"time"

	"kquic.dev/bench/matrix"
)

func TestPlan(t *testing.T) {
	s := matrix.Spec{Transports: []string{"tcp", "quic-go"}, Sizes: []int{1024, 65536}, MTUs: []int{1500, 9000}, GSO: []bool{true, false},
		Crypto: []bool{true, false}, Directions: []matrix.Direction{matrix.Up}, Streams: 1, Time: time.Second, Warmup: 300 * time.Millisecond, Repeat: 3, MaxRepeat: 9}
	// 32 cells of 9 samples of 3.3 s, a quarter more, 4 configurations.
	want := time.Duration(32*9)*(3300*time.Millisecond)*5/4 + 4*matrix.ConfigOverhead
	if got := s.Plan(); got != want {
		t.Errorf("Plan() = %v, want %v", got, want)
	}
	// --repeat alone: no extra rounds to make room for.
	s.MaxRepeat = 0
	if got, want := s.Plan(), time.Duration(32*3)*(3300*time.Millisecond)*5/4+4*matrix.ConfigOverhead; got != want {
		t.Errorf("Plan() without --max-repeat = %v, want %v", got, want)
	}
}
