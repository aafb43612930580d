//go:build linux

package vm

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// NICUsage is what a guest's link device did while the command ran, as the
// guest counted it: its interrupts (virtio-net's per-queue MSI-X vectors,
// so a reader sees that a driver with interrupts carried the traffic, and
// on which queues) and its packets and bytes. The guest reports it when
// the command has ended; a guest that was killed reports none.
type NICUsage struct {
	// IRQs are the device's interrupts by name ("virtio0-input.0"), each
	// the number delivered over the command's run, summed over the CPUs.
	IRQs []IRQCount `json:"irqs,omitempty"`
	// RxPackets ... are the device's counters over the command's run
	// (/sys/class/net/DEV/statistics).
	RxPackets uint64 `json:"rx_packets"`
	TxPackets uint64 `json:"tx_packets"`
	RxBytes   uint64 `json:"rx_bytes"`
	TxBytes   uint64 `json:"tx_bytes"`
}

// IRQCount is one interrupt of a device and how many were delivered.
type IRQCount struct {
	IRQ   int    `json:"irq"`
	Name  string `json:"name"`
	Count uint64 `json:"count"`
}

// nicCounters is a snapshot of a device's interrupts and statistics.
type nicCounters struct {
	irqs  map[int]IRQCount
	stats [4]uint64
}

var nicStatNames = [4]string{"rx_packets", "tx_packets", "rx_bytes", "tx_bytes"}

// readNICCounters reads dev's counters under sys and proc ("/sys", "/proc").
func readNICCounters(sys, proc, dev string) nicCounters {
	c := nicCounters{irqs: deviceIRQs(sys, proc, dev)}
	for i, n := range nicStatNames {
		b, _ := os.ReadFile(filepath.Join(sys, "class", "net", dev, "statistics", n))
		c.stats[i], _ = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	}
	return c
}

// usageSince is what the device did between before and c.
func (c nicCounters) usageSince(before nicCounters) *NICUsage {
	u := &NICUsage{
		RxPackets: c.stats[0] - before.stats[0], TxPackets: c.stats[1] - before.stats[1],
		RxBytes: c.stats[2] - before.stats[2], TxBytes: c.stats[3] - before.stats[3],
	}
	for irq, q := range c.irqs {
		q.Count -= before.irqs[irq].Count
		u.IRQs = append(u.IRQs, q)
	}
	slices.SortFunc(u.IRQs, func(a, b IRQCount) int { return a.IRQ - b.IRQ })
	return u
}

// deviceIRQs counts the interrupts of dev in proc/interrupts: those whose
// name starts with the device's bus name and a dash ("virtio0-input.0" for
// the virtio device behind eth0), or names dev itself ("eth0-rx-0", as
// many PCI drivers name theirs).
func deviceIRQs(sys, proc, dev string) map[int]IRQCount {
	prefixes := []string{dev + "-", dev}
	if p, err := os.Readlink(filepath.Join(sys, "class", "net", dev, "device")); err == nil {
		prefixes = append([]string{filepath.Base(p) + "-"}, prefixes...)
	}
	f, err := os.Open(filepath.Join(proc, "interrupts"))
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[int]IRQCount{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		irq, err := strconv.Atoi(strings.TrimSuffix(fields[0], ":"))
		if err != nil {
			continue
		}
		name := fields[len(fields)-1]
		match := false
		for _, p := range prefixes {
			if name == p || (strings.HasSuffix(p, "-") && strings.HasPrefix(name, p)) {
				match = true
				break
			}
		}
		if !match {
			continue
		}
		var n uint64
		for _, f := range fields[1:] {
			v, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				break
			}
			n += v
		}
		out[irq] = IRQCount{IRQ: irq, Name: name, Count: n}
	}
	return out
}
