//go:build linux

package vm

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// qemuArgs is qemu's command line for the job: the machine, the kernel
// with its initramfs, the ports, the 9p shares and the pair's link.
func (j *job) qemuArgs() []string {
	cmdline := []string{
		"console=ttyS0", "quiet", "loglevel=4", "panic=-1", "rdinit=/init", guestMarker,
		"random.trust_cpu=on", "8250.nr_uarts=1", "mitigations=off",
	}
	accel, cpu := "kvm", "host"
	switch j.accel {
	case "tcg":
		// One host thread for all vCPUs: with multi-threaded TCG the guest
		// kernel crashes now and then when it patches its own code (static
		// keys, tracepoints switched on by eBPF) while another vCPU runs it.
		accel, cpu = "tcg,thread=single", "max"
	case "tcg-multi":
		accel, cpu = "tcg,thread=multi", "max"
	}
	a := []string{
		"-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none", "-no-reboot",
		"-machine", "pc", "-accel", accel, "-cpu", cpu,
		"-smp", strconv.Itoa(j.cfg.CPUs), "-m", strconv.Itoa(j.cfg.Memory),
		"-kernel", j.cfg.Kernel, "-initrd", filepath.Join(j.work, "initramfs.cpio"),
		"-append", strings.Join(cmdline, " "),
		"-chardev", "socket,id=con,path=" + j.sock("console"), "-serial", "chardev:con",
		"-device", "virtio-serial-pci,id=vser",
	}
	for _, p := range j.ports() {
		if p == "console" {
			continue
		}
		a = append(a, "-chardev", "socket,id="+p+",path="+j.sock(p),
			"-device", "virtserialport,bus=vser.0,chardev="+p+",name="+p)
	}
	fsdev := func(id, path, tag string, ro bool) {
		opt := "local,id=" + id + ",path=" + path + ",security_model=none,multidevs=remap"
		if ro {
			opt += ",readonly=on"
		}
		a = append(a, "-fsdev", opt, "-device", "virtio-9p-pci,fsdev="+id+",mount_tag="+tag)
	}
	fsdev("fsroot", "/", rootTag, true)
	for i, s := range j.spec.Shares {
		fsdev(fmt.Sprintf("fs%d", i), s.Path, s.Tag, s.ReadOnly)
	}
	if j.nic != nil {
		a = append(a, j.nic.qemu...)
	}
	return append(a, forwardQemu(j.cfg.Forwards)...)
}
