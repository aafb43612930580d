//go:build linux

package kquic_test

// Host-side checks of configuration and counter parsing, and guest checks
// of counters and inherited transport parameters.

import (
	"context"
	"strings"
	"testing"
	"time"

	"kquic.dev/kquic"
)

func TestParseSNMPFixture(t *testing.T) {
	const fixture = "QuicConnCurrentEstabs\t2\nQuicConnPassiveEstabs\t5\nQuicConnActiveEstabs \t 5\n\nQuicFrmInCloses\t18446744073709551615\n"
	m, err := kquic.ParseSNMP(strings.NewReader(fixture))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 4 || m["QuicConnCurrentEstabs"] != 2 || m["QuicConnActiveEstabs"] != 5 || m["QuicFrmInCloses"] != 1<<64-1 {
		t.Errorf("ParseSNMP = %v", m)
	}
	for _, bad := range []string{"QuicX\n", "QuicX 1 2\n", "QuicX -1\n", "QuicX abc\n"} {
		if _, err := kquic.ParseSNMP(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("ParseSNMP(%q) = %v, want an error naming line 1", bad, err)
		}
	}
}

// TestConfigValidation: out-of-range values fail before any socket is
// made (so this runs on the host), naming the field.
func TestConfigValidation(t *testing.T) {
	ctls, stls := tlsPair(t)
	cases := []struct {
		field string
		cfg   kquic.Config
	}{
		{"MaxIdleTimeout", kquic.Config{Transport: kquic.TransportParameters{MaxIdleTimeout: 500 * time.Millisecond}}},
		{"MaxAckDelay", kquic.Config{Transport: kquic.TransportParameters{MaxAckDelay: 20 * time.Second}}},
		{"MaxData", kquic.Config{Transport: kquic.TransportParameters{MaxData: 100}}},
		{"MaxStreamDataBidiLocal", kquic.Config{Transport: kquic.TransportParameters{MaxStreamDataBidiLocal: 1 << 30}}},
		{"MaxStreamsBidi", kquic.Config{Transport: kquic.TransportParameters{MaxStreamsBidi: 5000}}},
		{"MaxDatagramFrameSize", kquic.Config{Transport: kquic.TransportParameters{MaxDatagramFrameSize: 1000}}},
		{"MaxUDPPayloadSize", kquic.Config{Transport: kquic.TransportParameters{MaxUDPPayloadSize: 65535}}},
		{"AckDelayExponent", kquic.Config{Transport: kquic.TransportParameters{AckDelayExponent: 21}}},
		{"ActiveConnectionIDLimit", kquic.Config{Transport: kquic.TransportParameters{ActiveConnectionIDLimit: 9}}},
		{"InitialRTT", kquic.Config{InitialRTT: 7 * time.Second}},
		{"PLPMTUDProbeInterval", kquic.Config{PLPMTUDProbeInterval: time.Second}},
		{"InitialMaxUDPPayload", kquic.Config{InitialMaxUDPPayload: 1100}},
		{"KeepAlive", kquic.Config{KeepAlive: time.Second}},
		{"CongestionControl", kquic.Config{CongestionControl: 2}},
		{"Token", kquic.Config{Token: make([]byte, 121)}},
		{"Events", kquic.Config{Events: []kquic.EventType{0}}},
	}
	for _, c := range cases {
		cfg := c.cfg
		cfg.TLS = ctls
		_, err := kquic.Dial(context.Background(), "udp", "127.0.0.1:1", &cfg)
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("Dial with a bad %s: %v, want an error naming it", c.field, err)
		}
		cfg.TLS = stls
		if _, err := kquic.Listen("udp", "127.0.0.1:0", &cfg); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("Listen with a bad %s: %v, want an error naming it", c.field, err)
		}
	}
	if _, err := kquic.Dial(context.Background(), "udp", "127.0.0.1:1", &kquic.Config{}); err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Errorf("Dial without TLS: %v", err)
	}
}

// TestFuncSNMP: the module's counters grow with connections.
func TestFuncSNMP(t *testing.T) {
	cli, _ := funcPair(t, nil, nil)
	before, err := kquic.ReadSNMP()
	if err != nil {
		t.Fatal(err)
	}
	if before["QuicConnCurrentEstabs"] < 2 {
		t.Errorf("QuicConnCurrentEstabs %d with a connection open (both ends): want at least 2", before["QuicConnCurrentEstabs"])
	}
	pair(t, nil, nil)
	echo(t, cli, "count me")
	after, err := kquic.ReadSNMP()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"QuicConnActiveEstabs", "QuicConnPassiveEstabs", "QuicConnCurrentEstabs"} {
		if after[k] <= before[k] {
			t.Errorf("%s %d -> %d after another connection: want it to grow", k, before[k], after[k])
		}
	}
}

// TestFuncListenerParamsInherited: an accepted connection keeps the
// listener's non-zero transport parameters (the kernel copies them, and a
// zero can never undo them); the client sees them.
func TestFuncListenerParamsInherited(t *testing.T) {
	tp := kquic.TransportParameters{MaxStreamsBidi: 7, MaxIdleTimeout: 9 * time.Second, GreaseQUICBit: true, MaxDatagramFrameSize: 1300}
	cli, srv := pair(t, nil, &kquic.Config{Transport: tp})
	got, err := srv.TransportParameters()
	if err != nil {
		t.Fatal(err)
	}
	if got.MaxStreamsBidi != 7 || got.MaxIdleTimeout != 9*time.Second || !got.GreaseQUICBit || got.MaxDatagramFrameSize != 1300 {
		t.Errorf("accepted connection's parameters %+v: want the listener's", got)
	}
	peer, err := cli.PeerTransportParameters()
	if err != nil {
		t.Fatal(err)
	}
	if peer.MaxStreamsBidi != 7 || peer.MaxIdleTimeout != 9*time.Second || peer.MaxDatagramFrameSize != 1300 {
		t.Errorf("client sees %+v: want the listener's parameters", peer)
	}
}
