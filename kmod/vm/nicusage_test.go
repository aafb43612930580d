//go:build linux

package vm

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestNICUsage: the device's interrupts are found by its virtio bus name
// in /proc/interrupts (virtio-net's vectors are named after virtio0, not
// eth0), summed over the CPUs, and the usage is the difference of two
// snapshots; other devices' interrupts are not counted.
func TestNICUsage(t *testing.T) {
	sys, proc := t.TempDir(), t.TempDir()
	net := filepath.Join(sys, "class", "net", "eth0")
	os.MkdirAll(filepath.Join(net, "statistics"), 0o755)
	os.MkdirAll(filepath.Join(sys, "devices", "pci0000:00", "0000:00:03.0", "virtio1"), 0o755)
	if err := os.Symlink("../../../devices/pci0000:00/0000:00:03.0/virtio1", filepath.Join(net, "device")); err != nil {
		t.Fatal(err)
	}
	write := func(irqs string, rx, tx uint64) {
		t.Helper()
		os.WriteFile(filepath.Join(proc, "interrupts"), []byte(irqs), 0o644)
		for name, v := range map[string]uint64{"rx_packets": rx, "tx_packets": tx, "rx_bytes": rx * 1000, "tx_bytes": tx * 100} {
			os.WriteFile(filepath.Join(net, "statistics", name), []byte(strconv.FormatUint(v, 10)+"\n"), 0o644)
		}
	}
	const head = "           CPU0       CPU1\n  0:         40          0   IO-APIC   2-edge      timer\n"
	write(head+
		" 24:          0          0  PCI-MSIX-0000:00:02.0   0-edge      virtio0-config\n"+
		" 25:        100          0  PCI-MSIX-0000:00:02.0   1-edge      virtio0-requests\n"+
		" 26:          0          0  PCI-MSIX-0000:00:03.0   0-edge      virtio1-config\n"+
		" 27:         10          5  PCI-MSIX-0000:00:03.0   1-edge      virtio1-input.0\n"+
		" 28:          3          0  PCI-MSIX-0000:00:03.0   2-edge      virtio1-output.0\n"+
		"NMI:          0          0   Non-maskable interrupts\n", 7, 9)
	before := readNICCounters(sys, proc, "eth0")
	if len(before.irqs) != 3 {
		t.Fatalf("interrupts of eth0: %+v, want virtio1's three", before.irqs)
	}
	write(head+
		" 24:          0          0  PCI-MSIX-0000:00:02.0   0-edge      virtio0-config\n"+
		" 25:       9100          0  PCI-MSIX-0000:00:02.0   1-edge      virtio0-requests\n"+
		" 26:          0          0  PCI-MSIX-0000:00:03.0   0-edge      virtio1-config\n"+
		" 27:        510        505  PCI-MSIX-0000:00:03.0   1-edge      virtio1-input.0\n"+
		" 28:         53          0  PCI-MSIX-0000:00:03.0   2-edge      virtio1-output.0\n", 1007, 2009)
	u := readNICCounters(sys, proc, "eth0").usageSince(before)
	want := []IRQCount{{26, "virtio1-config", 0}, {27, "virtio1-input.0", 1000}, {28, "virtio1-output.0", 50}}
	if len(u.IRQs) != len(want) {
		t.Fatalf("usage %+v, want IRQs %+v", u, want)
	}
	for i := range want {
		if u.IRQs[i] != want[i] {
			t.Errorf("IRQ %d: %+v, want %+v", i, u.IRQs[i], want[i])
		}
	}
	if u.RxPackets != 1000 || u.TxPackets != 2000 || u.RxBytes != 1000000 || u.TxBytes != 200000 {
		t.Errorf("packets and bytes %+v", u)
	}
}
