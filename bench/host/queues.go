//go:build linux

package host

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"kquic.dev/bench/results"
	"kquic.dev/internal/ethtool"
)

// QueueSnapshot is a device's per-queue counters at one instant: each
// interrupt's count (summed over the CPUs) and each queue's packets
// ("rx-0": n) from the netdev family's queue statistics, or where the
// driver has none there, from the per-queue counters of its ethtool -S
// statistics; or why there are none.
type QueueSnapshot struct {
	IRQs     map[int]uint64    `json:"irqs,omitempty"`
	Packets  map[string]uint64 `json:"packets,omitempty"`
	StatsErr string            `json:"stats_error,omitempty"`
}

// SnapshotQueues reads dev's per-queue counters (in the caller's network
// namespace).
func SnapshotQueues(dev string) QueueSnapshot {
	s := QueueSnapshot{IRQs: irqCounts("/proc/interrupts")}
	var err error
	if s.Packets, err = queueStats(dev); err == nil {
		return s
	}
	st, err2 := ethtool.GetStats(dev)
	if err2 != nil {
		s.StatsErr = fmt.Sprintf("%v; ethtool -S: %s", err, notReported(err2))
		return s
	}
	s.Packets = queuePackets(st)
	if len(s.Packets) == 0 {
		s.StatsErr = fmt.Sprintf("%v; ethtool -S: no per-queue packet counts among its %d statistics", err, len(st))
	}
	return s
}

// queuePackets are the per-queue packet counts among a driver's ethtool
// statistics, by queue ("rx-0").
func queuePackets(st map[string]uint64) map[string]uint64 {
	out := map[string]uint64{}
	for name, v := range st {
		if m := queueStat.FindStringSubmatch(name); m != nil {
			id, _ := strconv.Atoi(m[2])
			out[m[1]+"-"+strconv.Itoa(id)] += v
		}
	}
	return out
}

// QueueSetup reads how dev spreads flows over its queues: the queue
// counts, channels, RSS, flow hash fields, interrupts with their CPUs,
// and the queues' RPS and XPS masks; end names the end it belongs to.
func QueueSetup(end, dev string) results.NICQueues {
	n := results.NICQueues{End: end, Device: dev}
	qdir := filepath.Join("/sys/class/net", dev, "queues")
	ents, _ := os.ReadDir(qdir)
	for _, e := range ents {
		name := e.Name()
		file := ""
		switch {
		case strings.HasPrefix(name, "rx-"):
			n.RxQueues++
			file = "rps_cpus"
		case strings.HasPrefix(name, "tx-"):
			n.TxQueues++
			file = "xps_cpus"
		default:
			continue
		}
		q := results.QueueUse{Queue: name, Packets: -1}
		if b, err := os.ReadFile(filepath.Join(qdir, name, file)); err == nil {
			q.CPUMask = strings.TrimSpace(string(b))
		}
		n.Queues = append(n.Queues, q)
	}
	sort.Slice(n.Queues, func(i, j int) bool { return queueLess(n.Queues[i].Queue, n.Queues[j].Queue) })
	if c, err := ethtool.GetChannels(dev); err == nil {
		n.Channels = "rx " + strconv.Itoa(c.RX) + ", tx " + strconv.Itoa(c.TX) + ", combined " + strconv.Itoa(c.Combined) + "/" + strconv.Itoa(c.MaxComb)
	} else {
		n.Channels = notReported(err)
	}
	switch r, err := ethtool.GetRSS(dev); {
	case err != nil:
		n.RSSUnavailable = notReported(err)
	case len(r.Indirection) == 0 && r.Key == "":
		n.RSSUnavailable = "the driver names a hash function (" + r.HashFunc + ") but has no key or indirection table: the device does not spread flows by a table the kernel sets (virtio-net without its RSS feature: the host's end picks each packet's queue)"
	default:
		n.RSS = &results.RSS{HashFunc: r.HashFunc, Key: r.Key, Indirection: r.Indirection}
	}
	for name, ft := range map[string]uint32{"tcp4": ethtool.FlowTCP4, "udp4": ethtool.FlowUDP4, "tcp6": ethtool.FlowTCP6, "udp6": ethtool.FlowUDP6} {
		if f, err := ethtool.GetFlowHash(dev, ft); err == nil {
			if n.FlowHash == nil {
				n.FlowHash = map[string]string{}
			}
			if f == "" {
				f = "none"
			}
			n.FlowHash[name] = f
		}
	}
	for _, q := range readIRQs("/sys", "/proc", dev) {
		n.IRQs = append(n.IRQs, results.QueueIRQ{IRQ: q.IRQ, Name: q.Name, CPUs: q.CPUs})
	}
	return n
}

// queueLess orders "rx-2" before "rx-10", and receive queues first.
func queueLess(a, b string) bool {
	if a[:2] != b[:2] {
		return a < b
	}
	x, _ := strconv.Atoi(a[3:])
	y, _ := strconv.Atoi(b[3:])
	return x < y
}

// queueStat matches the per-queue packet statistics drivers name so:
// virtio-net's and Intel's rx_queue_0_packets, mlx5's rx0_packets.
var queueStat = regexp.MustCompile(`^(rx|tx)[_-]?(?:queue[_-]?)?([0-9]+)[_-]packets$`)

// CountQueues sets the interrupts and the queues' packets of n from the
// device's snapshots at the sample's two edges.
func CountQueues(n *results.NICQueues, a, b QueueSnapshot) {
	for i := range n.IRQs {
		n.IRQs[i].Count = b.IRQs[n.IRQs[i].IRQ] - a.IRQs[n.IRQs[i].IRQ]
	}
	if a.StatsErr != "" || b.StatsErr != "" {
		n.StatsUnavailable = a.StatsErr
		if n.StatsUnavailable == "" {
			n.StatsUnavailable = b.StatsErr
		}
		return
	}
	for i, q := range n.Queues {
		v1, ok1 := b.Packets[q.Queue]
		v0, ok0 := a.Packets[q.Queue]
		if ok0 && ok1 {
			n.Queues[i].Packets = int64(v1 - v0)
		}
	}
}

// irqCounts reads each interrupt's count, summed over the CPUs, from a
// /proc/interrupts file.
func irqCounts(path string) map[int]uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) == 0 {
		return nil
	}
	cpus := len(strings.Fields(lines[0]))
	out := map[int]uint64{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		irq, err := strconv.Atoi(strings.TrimSuffix(f[0], ":"))
		if err != nil {
			continue
		}
		var sum uint64
		for _, c := range f[1:min(len(f), cpus+1)] {
			v, err := strconv.ParseUint(c, 10, 64)
			if err != nil {
				break
			}
			sum += v
		}
		out[irq] = sum
	}
	return out
}
