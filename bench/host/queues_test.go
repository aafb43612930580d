//go:build linux

package host

import (
	"os"
	"path/filepath"
	"testing"

	"kquic.dev/bench/results"
)

// irqCounts sums each interrupt over the CPUs, and leaves the rows without
// a number (NMI, LOC, ...) out.
func TestIRQCounts(t *testing.T) {
	p := filepath.Join(t.TempDir(), "interrupts")
	os.WriteFile(p, []byte(`           CPU0       CPU1       CPU2       CPU3
  24:          3          0          0          0  PCI-MSIX-0000:00:03.0   0-edge      virtio0-config
  25:        100         20          0          5  PCI-MSIX-0000:00:03.0   1-edge      virtio0-input.0
  26:          0          0          7          0  PCI-MSIX-0000:00:03.0   2-edge      virtio0-output.0
 NMI:          0          0          0          0   Non-maskable interrupts
 ERR:          0
`), 0o644)
	got := irqCounts(p)
	want := map[int]uint64{24: 3, 25: 125, 26: 7}
	if len(got) != len(want) {
		t.Errorf("%v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("irq %d: %d, want %d", k, got[k], v)
		}
	}
}

// CountQueues takes each queue's packets from the statistics drivers name
// so, and each interrupt's count, as the differences of two snapshots.
func TestCountQueues(t *testing.T) {
	n := results.NICQueues{Queues: []results.QueueUse{{Queue: "rx-0", Packets: -1}, {Queue: "rx-1", Packets: -1}, {Queue: "rx-10", Packets: -1}, {Queue: "tx-0", Packets: -1}},
		IRQs: []results.QueueIRQ{{IRQ: 25}, {IRQ: 27}}}
	a := QueueSnapshot{IRQs: map[int]uint64{25: 10, 27: 1}, Packets: queuePackets(map[string]uint64{"rx_queue_0_packets": 5, "rx_queue_1_packets": 7, "rx10_packets": 0, "tx_queue_0_packets": 1, "rx_bytes": 9})}
	b := QueueSnapshot{IRQs: map[int]uint64{25: 30, 27: 1}, Packets: queuePackets(map[string]uint64{"rx_queue_0_packets": 105, "rx_queue_1_packets": 7, "rx10_packets": 50, "tx_queue_0_packets": 11, "rx_bytes": 99})}
	if len(a.Packets) != 4 {
		t.Errorf("per-queue packets of the statistics: %v, want four queues", a.Packets)
	}
	CountQueues(&n, a, b)
	for q, want := range map[string]int64{"rx-0": 100, "rx-1": 0, "rx-10": 50, "tx-0": 10} {
		for _, x := range n.Queues {
			if x.Queue == q && x.Packets != want {
				t.Errorf("%s: %d packets, want %d", q, x.Packets, want)
			}
		}
	}
	if n.IRQs[0].Count != 20 || n.IRQs[1].Count != 0 {
		t.Errorf("interrupts %+v, want 20 and 0", n.IRQs)
	}
	if used, counted := n.RxQueuesUsed(0.05); used != 2 || !counted {
		t.Errorf("%d receive queues used (counted %v), want 2", used, counted)
	}
	none := results.NICQueues{Queues: []results.QueueUse{{Queue: "rx-0", Packets: -1}}}
	CountQueues(&none, QueueSnapshot{StatsErr: "not reported by the driver"}, QueueSnapshot{StatsErr: "not reported by the driver"})
	if none.StatsUnavailable == "" {
		t.Error("no statistics and no word of it")
	}
}

// QueueSetup of the loopback device: one queue each way, from sysfs, and
// no RSS, said so.
func TestQueueSetupLoopback(t *testing.T) {
	n := QueueSetup("client", "lo")
	if n.RxQueues != 1 || n.TxQueues != 1 || len(n.Queues) != 2 || n.Queues[0].Queue != "rx-0" || n.Queues[1].Queue != "tx-0" {
		t.Errorf("lo: %+v, want one queue each way", n)
	}
	if n.RSS != nil || n.RSSUnavailable == "" {
		t.Errorf("lo's RSS: %+v / %q", n.RSS, n.RSSUnavailable)
	}
	if n.Queues[0].CPUMask == "" {
		t.Errorf("rx-0 of lo has no rps_cpus mask: %+v", n.Queues[0])
	}
}

// queueStats reads the netdev family's queue statistics of a device whose
// driver reports them (virtio-net's, in a guest or on a cloud host): a
// count per queue the kernel lists in sysfs, none going back between two
// reads; a device without them (lo) says so.
func TestQueueStats(t *testing.T) {
	if _, err := queueStats("lo"); err == nil {
		t.Error("lo has no queue statistics, and no error said so")
	}
	ents, _ := os.ReadDir("/sys/class/net")
	for _, e := range ents {
		dev := e.Name()
		a, err := queueStats(dev)
		if err != nil {
			t.Logf("%s: %v", dev, err)
			continue
		}
		b, err := queueStats(dev)
		if err != nil {
			t.Fatalf("%s: the second read: %v", dev, err)
		}
		n := QueueSetup("", dev)
		for _, q := range n.Queues {
			if _, ok := a[q.Queue]; !ok {
				t.Errorf("%s: sysfs lists %s, the queue statistics have no count of it: %v", dev, q.Queue, a)
			}
			if b[q.Queue] < a[q.Queue] {
				t.Errorf("%s: %s went back from %d to %d packets", dev, q.Queue, a[q.Queue], b[q.Queue])
			}
		}
		t.Logf("%s: %v", dev, b)
		return
	}
	t.Skip("no device here reports queue statistics")
}
