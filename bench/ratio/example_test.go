package ratio_test

import (
	"fmt"

	"kquic.dev/bench/ratio"
)

// The ratio of two cells' goodput samples, and whether it moved between
// two runs (an A/B of two module builds).
func Example() {
	quic := []float64{410, 425, 398, 431}
	ktls := []float64{870, 905, 880, 861}
	r, err := ratio.Of(quic, ktls)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("kquic / ktls at 64 KiB:", r)

	b := ratio.Cells{Num: []float64{468, 480, 455, 490}, Den: []float64{880, 899, 871, 902}}
	ch, err := ratio.Compare(ratio.Cells{Num: quic, Den: ktls}, b, 0.05)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("moved from %.2f to %.2f (p = %.4f, significant %v)\n", ch.A.Center, ch.B.Center, ch.P, ch.Significant)
	// Output:
	// kquic / ktls at 64 KiB: 0.47 [0.45, 0.50]
	// moved from 0.47 to 0.53 (p = 0.0019, significant true)
}
