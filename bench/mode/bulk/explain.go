package bulk

import (
	"fmt"
	"io"
	"strings"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/bulk/conns"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

// minQueueShare is the share of a device's received packets a queue must
// take to count as carrying flows (a stray ACK or ARP is not a flow).
const minQueueShare = 0.05

// writeExplain is the goodput view's explanation, then, for a run that
// recorded its devices' queues (two-host mode with --conns), where the
// receiving device put each cell's flows, with a warning for each cell
// whose connections landed on fewer receive queues than there were
// connections.
func writeExplain(w io.Writer, d *results.Document) error {
	if err := render.WriteCountersExplain(w, d); err != nil {
		return err
	}
	if err := WriteSendCounters(w, d); err != nil {
		return err
	}
	var lines []string
	for i := range d.Cells {
		r := &d.Cells[i]
		if r.Status != results.StatusOK || len(r.Samples) == 0 {
			continue
		}
		s := conns.SampleOf(&r.Samples[len(r.Samples)-1])
		if s == nil || len(s.NIC) == 0 {
			continue
		}
		lines = append(lines, queueLines(r, s)...)
	}
	if len(lines) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nWhere the receiving device put the flows (the last sample of each cell; queues with 5% or more of its received packets):")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return nil
}

// queueLines are a cell's lines: its receiving end's queues and
// interrupts, and the warning when its connections shared queues.
func queueLines(r *results.CellResult, s *conns.Sample) []string {
	recv := "server"
	if r.Direction == matrix.Down {
		recv = "client"
	}
	n := ConnsOf(r.Cell)
	var out []string
	for _, q := range s.NIC {
		if q.End != recv {
			continue
		}
		used, counted := q.RxQueuesUsed(minQueueShare)
		head := fmt.Sprintf("  %s: the %s's %s, %d receive queue(s)", r.Key, q.End, q.Device, q.RxQueues)
		if !counted {
			out = append(out, head+": no per-queue packet counts ("+strings.TrimSpace(q.StatsUnavailable+" "+irqText(q))+")")
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s; interrupts %s; %s", head, shareText(q), irqText(q), rssText(q)))
		if used < n {
			out = append(out, fmt.Sprintf("  ! %d connections landed on %d receive queue(s) of %d: they share queues, and with them the CPUs their interrupts and softirq run on (%s)",
				n, used, q.RxQueues, whyFewer(q, n)))
		}
	}
	return out
}

// shareText is the receive queues' shares of the packets: "rx-0 51%, rx-1
// 49%".
func shareText(q results.NICQueues) string {
	var total int64
	for _, x := range q.Queues {
		if strings.HasPrefix(x.Queue, "rx-") && x.Packets > 0 {
			total += x.Packets
		}
	}
	var parts []string
	for _, x := range q.Queues {
		if strings.HasPrefix(x.Queue, "rx-") && x.Packets > 0 {
			p := fmt.Sprintf("%s %s", x.Queue, render.Share(x.Packets, total))
			if x.CPUMask != "" && strings.Trim(x.CPUMask, "0,") != "" {
				p += " rps " + x.CPUMask
			}
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ", ")
}

// irqText is the interrupts that fired: "virtio0-input.0 1200 (cpu 0)".
func irqText(q results.NICQueues) string {
	var parts []string
	for _, i := range q.IRQs {
		if i.Count > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (cpus %s)", i.Name, i.Count, i.CPUs))
		}
	}
	if len(parts) == 0 {
		return "none counted"
	}
	return strings.Join(parts, ", ")
}

// rssText says how the device hashes flows to queues.
func rssText(q results.NICQueues) string {
	if q.RSS == nil {
		return "RSS " + q.RSSUnavailable
	}
	t := fmt.Sprintf("RSS %s, indirection table of %d", q.RSS.HashFunc, len(q.RSS.Indirection))
	if h := q.FlowHash["udp4"]; h != "" && h != "none" {
		t += ", udp4 hashed on " + h
	}
	return t
}

// whyFewer names the likely cause of flows sharing queues.
func whyFewer(q results.NICQueues, n int) string {
	switch {
	case q.RxQueues < n:
		return fmt.Sprintf("the device has %d receive queues for %d connections", q.RxQueues, n)
	case q.RSS != nil && q.FlowHash["udp4"] != "" && !strings.Contains(q.FlowHash["udp4"], "port"):
		return "the device hashes UDP on the addresses alone (" + q.FlowHash["udp4"] + "), so every QUIC connection between two hosts hashes alike: ethtool -N DEV rx-flow-hash udp4 sdfn"
	}
	return "the hash put them together: more connections spread better, or steer them with ethtool -N"
}
