//go:build linux

package host

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"kquic.dev/bench/results"
)

// TestReadIRQs reads a NIC's interrupts from a fake /sys and /proc laid out
// as a mlx5 card's: the vectors, their names and effective CPUs.
func TestReadIRQs(t *testing.T) {
	root := t.TempDir()
	sys, proc := filepath.Join(root, "sys"), filepath.Join(root, "proc")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, irq := range []string{"131", "98", "99"} {
		write(filepath.Join(sys, "class/net/eth0/device/msi_irqs", irq), "msix\n")
	}
	write(filepath.Join(proc, "interrupts"), `            CPU0       CPU1
  98:          0       1234  IR-PCI-MSIX-0000:3b:00.0    0-edge      mlx5_async0@pci:0000:3b:00.0
  99:       5678          0  IR-PCI-MSIX-0000:3b:00.0    1-edge      mlx5_comp0@pci:0000:3b:00.0
 NMI:          0          0   Non-maskable interrupts
`)
	write(filepath.Join(proc, "irq/98/effective_affinity_list"), "1\n")
	write(filepath.Join(proc, "irq/99/effective_affinity_list"), "\n")
	write(filepath.Join(proc, "irq/99/smp_affinity_list"), "0-1\n")
	got := readIRQs(sys, proc, "eth0")
	want := []results.NICIRQ{
		{IRQ: 98, Name: "mlx5_async0@pci:0000:3b:00.0", CPUs: "1"},
		{IRQ: 99, Name: "mlx5_comp0@pci:0000:3b:00.0", CPUs: "0-1"},
		{IRQ: 131},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("readIRQs = %+v\nwant %+v", got, want)
	}
	// virtio-net: eth1's device is the virtio device, whose vectors are
	// the PCI function's above it.
	pci := filepath.Join(sys, "devices/pci0000:00/0000:00:03.0")
	write(filepath.Join(pci, "msi_irqs", "27"), "msix\n")
	os.MkdirAll(filepath.Join(pci, "virtio1"), 0o755)
	os.MkdirAll(filepath.Join(sys, "class/net/eth1"), 0o755)
	if err := os.Symlink("../../../devices/pci0000:00/0000:00:03.0/virtio1", filepath.Join(sys, "class/net/eth1/device")); err != nil {
		t.Fatal(err)
	}
	if got := readIRQs(sys, proc, "eth1"); len(got) != 1 || got[0].IRQ != 27 {
		t.Errorf("virtio-net device: readIRQs = %+v, want its PCI function's vector 27", got)
	}
	if got := readIRQs(sys, proc, "veth0"); got != nil {
		t.Errorf("a device without MSI vectors: %+v", got)
	}
}
