//go:build linux

package host

import (
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
// interrupt's count (summed over the CPUs) and the device's statistics by
// name (ethtool -S), or why there are none.
type QueueSnapshot struct {
	IRQs     map[int]uint64    `json:"irqs,omitempty"`
	Stats    map[string]uint64 `json:"stats,omitempty"`
	StatsErr string            `json:"stats_error,omitempty"`
}

// SnapshotQueues reads dev's per-queue counters (in the caller's network
// namespace).
func SnapshotQueues(dev string) QueueSnapshot {
	s := QueueSnapshot{IRQs: irqCounts("/proc/interrupts")}
	st, err := ethtool.GetStats(dev)
	if err != nil {
		s.StatsErr = notReported(err)
	}
	s.Stats = st
	return s
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
	if r, err := ethtool.GetRSS(dev); err == nil {
		n.RSS = &results.RSS{HashFunc: r.HashFunc, Key: r.Key, Indirection: r.Indirection}
	} else {
		n.RSSUnavailable = notReported(err)
	}
	for name, ft := range map[string]uint32{"tcp4": ethtool.FlowTCP4, "udp4": ethtool.FlowUDP4, "tcp6": ethtool.FlowTCP6, "udp6": ethtool.FlowUDP6} {
		if f, err := ethtool.GetFlowHash(dev, ft); err == nil {
			if n.FlowHash == nil {
				n.FlowHash = map[string]string{}
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
		n.StatsUnavailable = strings.TrimSpace(a.StatsErr + " " + b.StatsErr)
		return
	}
	idx := map[string]int{}
	for i, q := range n.Queues {
		idx[q.Queue] = i
	}
	for name, v := range b.Stats {
		m := queueStat.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		q := m[1] + "-" + strings.TrimLeft(m[2], "0")
		if strings.HasSuffix(q, "-") {
			q += "0"
		}
		i, ok := idx[q]
		if !ok {
			continue
		}
		if n.Queues[i].Packets < 0 {
			n.Queues[i].Packets = 0
		}
		n.Queues[i].Packets += int64(v - a.Stats[name])
	}
	if len(b.Stats) > 0 && !anyCounted(n.Queues) {
		n.StatsUnavailable = "the driver's statistics have no per-queue packet counts"
	}
}

func anyCounted(qs []results.QueueUse) bool {
	for _, q := range qs {
		if q.Packets >= 0 {
			return true
		}
	}
	return false
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
