//go:build linux

package topo

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/vishvananda/netlink"
)

// netemLimit is the netem queue's length in packets. Its default, 1000,
// is less than a fast flow has in flight over a long delay (1 Gbit/s over
// 25 ms is about 2100 packets of 1500 bytes), and the queue would drop what
// the profile does not ask for.
const netemLimit = 100_000

// SetNetem puts the impairment on the veth pair: a netem qdisc on each end
// (as the root qdisc of its egress) with half the delay and jitter, so that
// the round trip has all of them, and the loss, reordering and rate of n on
// each, so that each direction has them. A zero n removes the qdiscs.
func (t *Topology) SetNetem(n Netem) error {
	for _, d := range t.devices() {
		if err := d.SetNetem(n, 2); err != nil {
			return err
		}
	}
	return nil
}

// SetNetem puts a netem qdisc with n on the device's egress, its delay and
// jitter divided by share (2 for each end of a pair, 1 for a single
// device), or removes it when n is zero.
func (d *Device) SetNetem(n Netem, share int) error {
	l, err := d.link()
	if err != nil {
		return err
	}
	attrs := netlink.QdiscAttrs{LinkIndex: l.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}
	if n.IsZero() {
		err := d.h.QdiscDel(&netlink.GenericQdisc{QdiscAttrs: attrs, QdiscType: "netem"})
		if err != nil && !errors.Is(err, syscall.ENOENT) && !errors.Is(err, syscall.EINVAL) {
			return fmt.Errorf("topology: remove netem from %s: %w", d.name, err)
		}
		return nil
	}
	if share < 1 {
		share = 1
	}
	q := netlink.NewNetem(attrs, netlink.NetemQdiscAttrs{
		Latency:     uint32(n.Delay.Microseconds() / int64(share)),
		Jitter:      uint32(n.Jitter.Microseconds() / int64(share)),
		Loss:        float32(n.Loss),
		ReorderProb: float32(n.Reorder),
		Limit:       netemLimit,
		Rate64:      n.Rate / 8,
	})
	if err := d.h.QdiscReplace(q); err != nil {
		return fmt.Errorf("topology: netem %s on %s: %w (does the kernel have sch_netem? load it, or run in the guest with --load sch_netem)", n, d.name, err)
	}
	return nil
}

// Netem reports the netem qdisc on the device's egress as tc shows it
// ("" when there is none), for the record and the tests.
func (d *Device) Netem() (string, error) {
	l, err := d.link()
	if err != nil {
		return "", err
	}
	qs, err := d.h.QdiscList(l)
	if err != nil {
		return "", fmt.Errorf("topology: qdiscs of %s: %w", d.name, err)
	}
	for _, q := range qs {
		if nq, ok := q.(*netlink.Netem); ok {
			us := func(ticks uint32) int { return int(float64(ticks)/netlink.TickInUsec() + 0.5) }
			return fmt.Sprintf("netem delay %dus jitter %dus loss %.2f%% reorder %.2f%% rate %d bit/s limit %d",
				us(nq.Latency), us(nq.Jitter), pct(nq.Loss), pct(nq.ReorderProb), nq.Rate64*8, nq.Limit), nil
		}
	}
	return "", nil
}

// pct turns netem's 32-bit probability back into a percentage.
func pct(p uint32) float64 { return float64(p) / float64(^uint32(0)) * 100 }
