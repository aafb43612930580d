//go:build linux

package counters

import (
	"testing"
)

func l3BucketOf(size int) int { return bucketOf(size) }

func segBucketOf(n int) int {
	for i, b := range SegBounds {
		if uint32(n) <= b {
			return i
		}
	}
	return len(SegBounds)
}

// TestTxL3AndSegments: full-MTU datagrams (1514-byte frames, 1500 bytes of
// IP) fall in tx_l3 le1500 with one segment, and two-segment UDP GSO
// super-packets of the same datagrams in tx_l3 le3000 with two: the two
// part, where tx_size (the frame's length) puts both in le3000. The device
// takes UDP super-packets whole here, as a NIC with UDP segmentation
// offload does.
func TestTxL3AndSegments(t *testing.T) {
	tp := newTopo(t, true)
	deviceTakesUDPGSO(t, tp, true)
	const port, n, seg = 4440, 50, 1500 - 20 - 8
	cfd, sfd := udpPair(t, tp, port)
	sendN(t, tp, cfd, port, 1, 100, 0) // resolve ARP before counting
	receiveOne(t, tp, sfd)
	s := startSet(t, tp)
	sendN(t, tp, cfd, port, n, seg, 0)         // n full frames
	sendN(t, tp, cfd, port, n, 2*seg, seg)     // n super-packets of 2 segments
	sendN(t, tp, cfd, port, n, 4*seg-100, seg) // n of 4 (the last one short)
	drain(t, tp, sfd)
	r, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	c := r.Ends[0]
	t.Logf("client: tx_size %v tx_l3 %v tx_segs %v", c.TxSizes, c.TxL3Sizes, c.TxSegs)
	// The frame's length puts full frames (1514) and 2-segment packets
	// (2994) in one bucket: the reason for tx_l3 and tx_segs.
	if got := c.TxSizes[bucketOf(1514)]; got != 2*n || bucketOf(1514) != bucketOf(14+20+2*(8+seg)) {
		t.Errorf("tx_size.%s %d, want %d (frames and 2-segment packets alike)", bucketName(bucketOf(1514)), got, 2*n)
	}
	// The stack's own small packets (ARP, IPv6 neighbour and router
	// solicitations: under 100 bytes) may leave the device in the window
	// too, one segment each: 2 of them in the TCG guest.
	small := c.TxL3Sizes[l3BucketOf(100)]
	if small > 5 {
		t.Errorf("%d packets under 100 bytes in the window: more than the stack's own", small)
	}
	for _, tc := range []struct {
		what     string
		l3, segs int
	}{
		{"full frames", 1500, 1},
		{"2-segment packets", 20 + 2*(8+seg), 2},
		{"4-segment packets", 20 + 4*8 + 4*seg - 100, 4},
	} {
		if got := c.TxL3Sizes[l3BucketOf(tc.l3)]; got != n {
			t.Errorf("%s: tx_l3.%s %d, want %d", tc.what, bucketName(l3BucketOf(tc.l3)), got, n)
		}
		want := n
		if tc.segs == 1 {
			want += int(small)
		}
		if got := int(c.TxSegs[segBucketOf(tc.segs)]); got != want {
			t.Errorf("%s: tx_segs.%s %d, want %d (%d of the test's and %d small ones of the stack's)", tc.what, segBucketName(segBucketOf(tc.segs)), got, want, n, want-n)
		}
	}
	flat := r.Flat()
	if flat["client.tx_segs.2"] != n || flat["client.tx_l3.le1500"] != n || flat["client.tx_segs.le4"] != n {
		t.Errorf("Flat: tx_segs.2 %v, tx_segs.le4 %v, tx_l3.le1500 %v", flat["client.tx_segs.2"], flat["client.tx_segs.le4"], flat["client.tx_l3.le1500"])
	}
}
