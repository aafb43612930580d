//go:build linux

package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
	"kquic.dev/bench/topo"
	"kquic.dev/internal/ethtool"
)

// ReadNIC records the device's setup, reading it in the device's network
// namespace.
func ReadNIC(d *topo.Device) results.NIC {
	n := results.NIC{Device: d.Name()}
	d.Do(func() error {
		readNIC(&n)
		return nil
	})
	return n
}

func notReported(err error) string {
	if errors.Is(err, ethtool.ErrNotSupported) {
		return "not reported by the driver"
	}
	return "unknown: " + err.Error()
}

func readNIC(n *results.NIC) {
	if di, err := ethtool.GetDriverInfo(n.Device); err == nil {
		n.Driver, n.DriverVersion, n.Firmware, n.BusInfo = di.Driver, di.Version, di.Firmware, di.BusInfo
	} else {
		n.Driver = notReported(err)
	}
	if r, err := ethtool.GetRings(n.Device); err == nil {
		n.Rings = fmt.Sprintf("rx %d/%d, tx %d/%d", r.RX, r.RXMax, r.TX, r.TXMax)
	} else {
		n.Rings = notReported(err)
	}
	if c, err := ethtool.GetChannels(n.Device); err == nil {
		n.Channels = fmt.Sprintf("rx %d/%d, tx %d/%d, combined %d/%d, other %d", c.RX, c.MaxRX, c.TX, c.MaxTX, c.Combined, c.MaxComb, c.Other)
	} else {
		n.Channels = notReported(err)
	}
	if c, err := ethtool.GetCoalesce(n.Device); err == nil {
		n.Coalescing = fmt.Sprintf("rx-usecs %d, rx-frames %d, tx-usecs %d, tx-frames %d, adaptive rx %s tx %s",
			c.RXUsecs, c.RXFrames, c.TXUsecs, c.TXFrames, matrix.OnOff(c.AdaptiveRX), matrix.OnOff(c.AdaptiveTX))
	} else {
		n.Coalescing = notReported(err)
	}
	n.IRQs = readIRQs("/sys", "/proc", n.Device)
}

// readIRQs lists the device's MSI interrupts (sys/class/net/DEV/device/
// msi_irqs, or for a virtio device, whose vectors belong to the PCI device
// above it, device/../msi_irqs), their names in proc/interrupts and their
// effective CPUs.
func readIRQs(sys, proc, dev string) []results.NICIRQ {
	devDir := filepath.Join(sys, "class", "net", dev, "device")
	ents, err := os.ReadDir(filepath.Join(devDir, "msi_irqs"))
	if real, rerr := filepath.EvalSymlinks(devDir); err != nil && rerr == nil && strings.HasPrefix(filepath.Base(real), "virtio") {
		ents, err = os.ReadDir(filepath.Join(filepath.Dir(real), "msi_irqs"))
	}
	if err != nil {
		return nil
	}
	names := irqNames(filepath.Join(proc, "interrupts"))
	var out []results.NICIRQ
	for _, e := range ents {
		irq, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		q := results.NICIRQ{IRQ: irq, Name: names[irq]}
		for _, f := range []string{"effective_affinity_list", "smp_affinity_list"} {
			if b, err := os.ReadFile(filepath.Join(proc, "irq", e.Name(), f)); err == nil && len(strings.TrimSpace(string(b))) > 0 {
				q.CPUs = strings.TrimSpace(string(b))
				break
			}
		}
		out = append(out, q)
	}
	slices.SortFunc(out, func(a, b results.NICIRQ) int { return a.IRQ - b.IRQ })
	return out
}

// irqNames maps interrupt numbers to the last column of /proc/interrupts
// (the vector's name, such as "mlx5_comp3@pci:0000:3b:00.0").
func irqNames(path string) map[int]string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	m := map[int]string{}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(f[0], ":"))
		if err != nil {
			continue
		}
		m[n] = f[len(f)-1]
	}
	return m
}
