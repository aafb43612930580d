package fuzz

import (
	"bytes"
	"reflect"
	"testing"

	"kquic.dev/internal/quicwire"
)

func TestGeneratorDeterministic(t *testing.T) {
	a, b := Generator{Seed: 42, InitialShare: 0.3}, Generator{Seed: 42, InitialShare: 0.3}
	kinds := map[string]int{}
	for n := 0; n < 500; n++ {
		x, y := a.Input(n), b.Input(n)
		if !reflect.DeepEqual(x, y) {
			t.Fatalf("input %d differs between two generators of one seed", n)
		}
		kinds[x.Kind]++
		if x.Seq != n || x.What == "" || len(x.Payload) == 0 && x.Kind == KindInitial {
			t.Fatalf("input %d: %+v", n, x)
		}
	}
	if kinds[KindInitial] < 100 || kinds[KindFrames] < 250 {
		t.Fatalf("kinds %v for a share of 0.3", kinds)
	}
	c := Generator{Seed: 43, InitialShare: 0.3}
	same := 0
	for n := 0; n < 50; n++ {
		if bytes.Equal(a.Input(n).Payload, c.Input(n).Payload) {
			same++
		}
	}
	if same > 5 {
		t.Fatalf("seeds 42 and 43 made %d equal inputs of 50", same)
	}
}

// The generator reaches the edges it is for: every frame type, values at
// 2^62-1, ACK ranges below zero, Retire Prior To above the sequence number.
func TestGeneratorEdges(t *testing.T) {
	g := Generator{Seed: 1}
	types := map[string]bool{}
	var maxOffset, underflowAck, badRetire, initials bool
	for n := 0; n < 3000; n++ {
		in := g.Input(n)
		fs, _ := quicwire.ParseFrames(in.Payload)
		for _, f := range fs {
			types[quicwire.FrameName(f.FrameType())] = true
			switch f := f.(type) {
			case quicwire.Stream:
				maxOffset = maxOffset || f.Offset+uint64(len(f.Data)) > quicwire.MaxVarint
			case *quicwire.Ack:
				_, err := f.Acked()
				underflowAck = underflowAck || err != nil
			case quicwire.NewConnectionID:
				badRetire = badRetire || f.RetirePriorTo > f.Seq
			}
		}
	}
	for n := 0; n < 200; n++ {
		in := (&Generator{Seed: 1, InitialShare: 1}).Input(n)
		pkts, _ := quicwire.SplitDatagram(in.Payload, 0)
		if len(pkts) > 0 {
			if h, _, _, err := quicwire.ParseHeader(pkts[0], 0); err == nil && h.Type == quicwire.Initial {
				initials = true
			}
		}
	}
	if len(types) < 20 || !maxOffset || !underflowAck || !badRetire || !initials {
		t.Fatalf("%d frame types %v; offset past 2^62-1 %v, ACK below 0 %v, retire above seq %v, Initials %v",
			len(types), types, maxOffset, underflowAck, badRetire, initials)
	}
}
