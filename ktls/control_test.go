//go:build linux

package ktls

import (
	"errors"
	"io"
	"testing"
)

func TestCtrlParser(t *testing.T) {
	var p ctrlParser
	nst := []byte{hsNewSessionTicket, 0, 0, 3, 1, 2, 3}
	ku := []byte{hsKeyUpdate, 0, 0, 1, 1}
	all := append(append([]byte{}, nst...), ku...)
	var evs []ctrlEvent
	for i := range all { // one byte at a time
		e, err := p.feed(recordHandshake, all[i:i+1])
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e...)
	}
	if len(evs) != 2 || evs[0].hsType != hsNewSessionTicket || len(evs[0].hsBody) != 3 || evs[1].hsType != hsKeyUpdate {
		t.Fatalf("events %+v", evs)
	}
	if req, err := parseKeyUpdate(evs[1].hsBody); err != nil || !req {
		t.Fatalf("KeyUpdate: %v %v", req, err)
	}
	if p.pending() {
		t.Fatal("pending after complete messages")
	}
	evs, err := p.feed(recordAlert, []byte{1, 0})
	if err != nil || len(evs) != 1 || alertErr(evs[0].level, evs[0].desc) != io.EOF {
		t.Fatalf("close_notify: %+v %v", evs, err)
	}
	var ae *AlertError
	if err := alertErr(2, 40); !errors.As(err, &ae) || ae.Description != 40 || ae.Error() == "" {
		t.Fatalf("handshake_failure: %v", err)
	}
	if _, err := p.feed(recordHandshake, []byte{4, 0xff, 0xff, 0xff}); !errors.Is(err, ErrUnexpectedMessage) {
		t.Fatalf("oversized message: %v", err)
	}
	if _, err := (&ctrlParser{}).feed(recordChangeCipherSpec, []byte{1}); !errors.Is(err, ErrUnexpectedMessage) {
		t.Fatalf("CCS: %v", err)
	}
	if _, err := parseKeyUpdate([]byte{2}); err == nil {
		t.Fatal("KeyUpdate 2 accepted")
	}
}

// FuzzCtrlParser feeds kernel-supplied control record bytes, split anywhere,
// and checks the parser never panics, never returns more than was fed and
// keeps its buffer bounded.
func FuzzCtrlParser(f *testing.F) {
	f.Add(byte(recordHandshake), []byte{4, 0, 0, 3, 1, 2, 3, 24, 0, 0, 1, 0}, uint8(3))
	f.Add(byte(recordAlert), []byte{2, 40, 1, 0}, uint8(1))
	f.Add(byte(recordHandshake), []byte{24, 0, 0, 1}, uint8(0))
	f.Add(byte(99), []byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, typ byte, data []byte, split uint8) {
		var p ctrlParser
		cut := min(int(split), len(data))
		total := 0
		for _, part := range [][]byte{data[:cut], data[cut:]} {
			evs, err := p.feed(typ, part)
			if err != nil {
				return
			}
			for _, e := range evs {
				if e.alert {
					total += 2
					alertErr(e.level, e.desc)
				} else {
					total += 4 + len(e.hsBody)
					if e.hsType == hsKeyUpdate {
						parseKeyUpdate(e.hsBody)
					}
				}
			}
		}
		if total+len(p.hs)+len(p.alert) != len(data) {
			t.Fatalf("consumed %d + buffered %d != fed %d", total, len(p.hs)+len(p.alert), len(data))
		}
		if len(p.hs) > 4+maxPostHandshakeMsg {
			t.Fatalf("buffer grew to %d", len(p.hs))
		}
	})
}

// FuzzRecordScanner checks that reads limited by the scanner never cross a
// record boundary of an arbitrary byte stream.
func FuzzRecordScanner(f *testing.F) {
	f.Add([]byte{22, 3, 3, 0, 2, 1, 2, 23, 3, 3, 0, 0}, uint8(3))
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint8) {
		var s recordScanner
		var tap helloTap
		s.tap = &tap
		// Reference boundaries.
		var bounds []int
		for off := 0; off+5 <= len(stream); {
			off += 5 + (int(stream[off+3])<<8 | int(stream[off+4]))
			bounds = append(bounds, off)
		}
		off := 0
		for off < len(stream) {
			n := min(s.limit(), len(stream)-off, int(chunk)+1)
			if n <= 0 {
				t.Fatalf("limit %d at %d", s.limit(), off)
			}
			for _, b := range bounds {
				if off < b && off+n > b {
					t.Fatalf("read [%d,%d) crosses %d", off, off+n, b)
				}
			}
			s.feed(stream[off : off+n])
			off += n
		}
	})
}
