package render

import (
	"fmt"
	"io"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
	"kquic.dev/bench/transport"
)

// windowLimitedShare is how close to window/RTT a cell's goodput must come
// to be called window-limited (see Brake.Limited).
const windowLimitedShare = 0.5

// A Brake is something that may have held a cell's goodput down, found in
// its results: a flow-control window that caps it at window/RTT, or a
// receive buffer that overflowed.
type Brake struct {
	// Key is the cell's (CellResult.Key).
	Key string
	// Kind is "window" or "rcvbuf".
	Kind string
	// Limited says whether the brake held the cell: for "window", whether
	// the goodput reached half of window/RTT (a receiver grants more window
	// as it reads, typically when half is used up, so a flow held by its
	// window moves between half of window/RTT and all of it); "rcvbuf"
	// brakes are reported only when datagrams were dropped.
	Limited bool
	// Bound is window/RTT in bit/s, for "window".
	Bound float64
	// Text says it in a sentence, with the remedy.
	Text string
}

// windowBrake compares a cell's goodput with the bound its flow-control
// window sets over the impairment's round trip; ok is false when there is
// no delay or the transport has no fixed window (TCP autotunes its own).
func windowBrake(d *results.Document, c *results.CellResult) (b Brake, ok bool) {
	rtt := d.Spec.Impairment().Delay
	stream, conn, how := transport.FlowWindow(c.Transport, d.Spec.Options(c.Cell))
	if rtt <= 0 || stream == 0 || c.Status != results.StatusOK || c.MedianBps <= 0 {
		return Brake{}, false
	}
	streams := int64(max(c.Streams, 1))
	win, which := streams*stream, fmt.Sprintf("%s stream window × %d stream(s)", sizeName64(stream), streams)
	if conn < win {
		win, which = conn, sizeName64(conn)+" connection window"
	}
	b = Brake{Key: c.Key, Kind: "window", Bound: float64(win) * 8 / rtt.Seconds()}
	share := c.MedianBps / b.Bound
	b.Limited = share >= windowLimitedShare
	verdict := "not window-limited"
	if b.Limited {
		verdict = "WINDOW-LIMITED: raise the receiver's window (kqbench: --window)"
	}
	b.Text = fmt.Sprintf("%s: %.1f Mbit/s is %.0f%% of window/RTT = %s / %v = %.1f Mbit/s: %s (window: %s)",
		cellName(c), c.MedianBps/1e6, share*100, which, rtt.Round(time.Microsecond), b.Bound/1e6, verdict, how)
	return b, true
}

// rcvbufBrake reports the datagrams the receiver's UDP sockets (or the QUIC
// module's socket) dropped for a full receive buffer during the cell's
// windows; ok is false when there were none or nothing counted them.
func rcvbufBrake(d *results.Document, c *results.CellResult) (b Brake, ok bool) {
	recv := "server"
	if c.Direction == "down" {
		recv = "client"
	}
	var udp, mod, mb float64
	counted := false
	for _, s := range c.Samples {
		if s.Counters == nil {
			continue
		}
		if v, has := s.Counters[recv+".proc.Udp.RcvbufErrors"]; has {
			counted = true
			udp += v
		}
		mod += s.Counters[recv+".proc.Quic.QuicFrmRcvBufDrop"]
		mb += float64(s.Bytes) / 1e6
	}
	if !counted || udp+mod == 0 {
		return Brake{}, false
	}
	b = Brake{Key: c.Key, Kind: "rcvbuf", Limited: true}
	switch {
	case udp > 0:
		ceiling := d.Env.Machine.Sysctls["net.core.rmem_max"]
		if ceiling == "" {
			ceiling = "?"
		}
		b.Text = fmt.Sprintf("%s: the receiver's UDP receive buffer overflowed: %.0f datagrams dropped (Udp RcvbufErrors in /proc/net/snmp, %.2f per MB). "+
			"A socket's SO_RCVBUF is capped at net.core.rmem_max (%s here; root may exceed it with SO_RCVBUFFORCE, as quic-go does for its 7 MiB): "+
			"lift the ceiling with sysctl -w net.core.rmem_max=16777216 and have the server ask for the buffer (nginx: listen ... quic rcvbuf=16m)",
			cellName(c), udp, udp/max(mb, 1e-9), ceiling)
		if mod > 0 {
			b.Text += fmt.Sprintf("; the QUIC module dropped %.0f frames for its own buffer (QuicFrmRcvBufDrop; net.quic.rmem)", mod)
		}
	default:
		b.Text = fmt.Sprintf("%s: the QUIC module's socket buffer overflowed: %.0f frames dropped (QuicFrmRcvBufDrop in /proc/net/quic/snmp, %.2f per MB): "+
			"the module sizes it as 4 × max_data, within net.quic.rmem", cellName(c), mod, mod/max(mb, 1e-9))
	}
	return b, true
}

// Brakes finds the brakes of every measured cell, in the document's order:
// under a delay, each QUIC cell's goodput against window/RTT; and every cell
// whose receiver dropped datagrams for a full buffer (with --explain's
// counters).
func Brakes(d *results.Document) []Brake {
	var out []Brake
	for i := range d.Cells {
		c := &d.Cells[i]
		if b, ok := windowBrake(d, c); ok {
			out = append(out, b)
		}
		if b, ok := rcvbufBrake(d, c); ok {
			out = append(out, b)
		}
	}
	return out
}

// writeBrakes prints the brakes: under a delay, each QUIC cell's goodput
// against window/RTT; and every cell whose receiver dropped datagrams for
// a full buffer.
func writeBrakes(w io.Writer, d *results.Document) error {
	bs := Brakes(d)
	if len(bs) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nBrakes (flow-control window against the round trip of the impairment; receive buffers that overflowed):")
	for _, b := range bs {
		if _, err := fmt.Fprintln(w, "  "+b.Text); err != nil {
			return err
		}
	}
	return nil
}

// cellName names a cell in a sentence.
func cellName(c *results.CellResult) string {
	s := fmt.Sprintf("%s %s MTU %d GSO %s %s", c.Transport, SizeName(c.Size), c.MTU, matrix.OnOff(c.GSO), c.Direction)
	if !c.Crypto {
		s += " unencrypted"
	}
	if c.CC != "" {
		s += " cc " + c.CC
	}
	return s
}

func sizeName64(n int64) string { return SizeName(int(n)) }
