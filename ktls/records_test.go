//go:build linux

package ktls

import (
	"bytes"
	"net"
	"testing"
)

func rec(typ byte, body []byte) []byte {
	return append([]byte{typ, 3, 3, byte(len(body) >> 8), byte(len(body))}, body...)
}

func TestRecordScannerLimits(t *testing.T) {
	stream := append(rec(22, []byte("abc")), rec(23, bytes.Repeat([]byte{1}, 300))...)
	stream = append(stream, rec(23, nil)...)
	var s recordScanner
	var reads [][]byte
	for p := stream; len(p) > 0; {
		n := min(s.limit(), len(p), 7) // short reads, too
		if n == 0 {
			t.Fatalf("limit 0 at %d", len(stream)-len(p))
		}
		reads = append(reads, p[:n])
		s.feed(p[:n])
		p = p[n:]
	}
	if !s.atBoundary() {
		t.Fatal("not at a boundary at the end")
	}
	// No read crossed a record boundary: the boundaries are at 8 and 313.
	off := 0
	for _, r := range reads {
		for _, b := range []int{8, 313} {
			if off < b && off+len(r) > b {
				t.Fatalf("read [%d,%d) crosses boundary %d", off, off+len(r), b)
			}
		}
		off += len(r)
	}
}

func TestHelloTap(t *testing.T) {
	random := bytes.Repeat([]byte{0xaa}, 32)
	sh := append([]byte{2, 0, 0, 70, 3, 3}, random...)
	sh = append(sh, make([]byte, 70-34)...)
	stream := rec(22, sh[:10])                   // ServerHello split over records
	stream = append(stream, rec(22, sh[10:])...) // ...
	stream = append(stream, rec(20, []byte{1})...)
	for _, chunk := range []int{1, 3, 1000} {
		var tap helloTap
		s := recordScanner{tap: &tap}
		for p := stream; len(p) > 0; {
			n := min(chunk, len(p))
			s.feed(p[:n])
			p = p[n:]
		}
		if !tap.done || !bytes.Equal(tap.random, random) {
			t.Errorf("chunk %d: random %x done %v", chunk, tap.random, tap.done)
		}
	}
}

// TestRecordConnStopsAtBoundary: with two records in the socket, a large
// Read returns only the first record's header, then its body.
func TestRecordConnStopsAtBoundary(t *testing.T) {
	c, s := tcpPair(t)
	stream := append(rec(22, []byte("hello")), rec(23, []byte("after the handshake"))...)
	if _, err := s.Write(stream); err != nil {
		t.Fatal(err)
	}
	rc := newRecordConn(c, true)
	buf := make([]byte, 4096)
	var got []byte
	for len(got) < 10 {
		n, err := rc.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.Equal(got, stream[:10]) || !rc.atBoundary() {
		t.Fatalf("read %q (boundary %v), want exactly the first record", got, rc.atBoundary())
	}
	rest := make([]byte, len(stream)-10)
	if _, err := c.Read(rest); err != nil || !bytes.Equal(rest[:5], stream[10:15]) {
		t.Fatalf("the second record was not left in the socket: %q %v", rest, err)
	}
	var _ net.Conn = rc
}
