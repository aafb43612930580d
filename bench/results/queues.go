package results

// NICQueues is where a device put a sample's packets (two-host mode,
// kqbench matrix --vm-peer): its queues and how it spreads received flows
// over them (RSS: the hash function, key and indirection table; the
// header fields it hashes per flow type), each of its interrupts with the
// CPUs it may run on and how many it took during the sample, and each
// queue's packets during the sample with its RPS or XPS CPU mask. What the
// device or its driver does not report is said, not left at zero.
type NICQueues struct {
	// End is the end whose device it is ("client", "server"), Device its
	// name.
	End    string `json:"end"`
	Device string `json:"device"`
	// RxQueues and TxQueues are the queues the kernel uses
	// (/sys/class/net/DEV/queues), Channels what ethtool -l says.
	RxQueues int    `json:"rx_queues"`
	TxQueues int    `json:"tx_queues"`
	Channels string `json:"channels,omitempty"`
	// RSS is the device's receive-side scaling, or RSSUnavailable why
	// there is none to read.
	RSS            *RSS   `json:"rss,omitempty"`
	RSSUnavailable string `json:"rss_unavailable,omitempty"`
	// FlowHash is the header fields hashed per flow type ("tcp4":
	// "src-ip,dst-ip,src-port,dst-port"), where the driver reports them.
	FlowHash map[string]string `json:"flow_hash,omitempty"`
	// IRQs are the device's interrupts and what each took in the sample.
	IRQs []QueueIRQ `json:"irqs,omitempty"`
	// Queues are the device's queues and the packets of each in the
	// sample, from its per-queue statistics (StatsUnavailable: why none).
	Queues           []QueueUse `json:"queues,omitempty"`
	StatsUnavailable string     `json:"stats_unavailable,omitempty"`
}

// RSS is a device's receive-side scaling (ethtool -x).
type RSS struct {
	HashFunc    string   `json:"hash_func"`
	Key         string   `json:"key,omitempty"`
	Indirection []uint32 `json:"indirection,omitempty"`
}

// QueueIRQ is one interrupt of a device: its number and name
// (/proc/interrupts), the CPUs it may be delivered to
// (/proc/irq/N/smp_affinity_list) and the interrupts it took in the
// sample, summed over the CPUs.
type QueueIRQ struct {
	IRQ   int    `json:"irq"`
	Name  string `json:"name"`
	CPUs  string `json:"cpus,omitempty"`
	Count uint64 `json:"count"`
}

// QueueUse is one queue of a device ("rx-0", "tx-3"): its packets in the
// sample (-1 where the driver has no count for it), and its RPS (receive)
// or XPS (transmit) CPU mask from sysfs ("" where there is none; 0: off).
type QueueUse struct {
	Queue   string `json:"queue"`
	Packets int64  `json:"packets"`
	CPUMask string `json:"cpu_mask,omitempty"`
}

// RxQueuesUsed counts the receive queues that took a share of at least
// minShare of the device's received packets in the sample, and whether
// the device counts them per queue.
func (n *NICQueues) RxQueuesUsed(minShare float64) (used int, counted bool) {
	var total int64
	for _, q := range n.Queues {
		if len(q.Queue) > 3 && q.Queue[:3] == "rx-" && q.Packets > 0 {
			total += q.Packets
			counted = true
		}
	}
	for _, q := range n.Queues {
		if len(q.Queue) > 3 && q.Queue[:3] == "rx-" && q.Packets > 0 && float64(q.Packets) >= minShare*float64(total) {
			used++
		}
	}
	return used, counted
}
