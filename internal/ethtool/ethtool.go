//go:build linux

// Package ethtool reads and switches a network device's offloads (TSO, GSO,
// GRO, and any feature by its `ethtool -k` name) through the SIOCETHTOOL
// ioctl, as `ethtool -K` does, and reads what
// a benchmark must record of a NIC (driver and firmware, rings, channels,
// interrupt coalescing: `ethtool -i/-g/-l/-c`), in the network namespace of
// the calling thread.
package ethtool

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Offload is a legacy ethtool offload switch.
type Offload struct {
	Name     string
	get, set uint32
}

// The offloads kqbench switches (from <linux/ethtool.h>).
var (
	TSO = Offload{"tso", 0x1e, 0x1f} // ETHTOOL_GTSO / ETHTOOL_STSO
	GSO = Offload{"gso", 0x23, 0x24} // ETHTOOL_GGSO / ETHTOOL_SGSO
	GRO = Offload{"gro", 0x2b, 0x2c} // ETHTOOL_GGRO / ETHTOOL_SGRO
)

// ethtoolValue is struct ethtool_value.
type ethtoolValue struct {
	cmd  uint32
	data uint32
}

// ifreqData is struct ifreq with ifr_data.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

func call(dev string, v *ethtoolValue) error { return callPtr(dev, unsafe.Pointer(v)) }

// callPtr issues SIOCETHTOOL with one of the ethtool command structs, whose
// first field is the command.
func callPtr(dev string, v unsafe.Pointer) error {
	if len(dev) >= unix.IFNAMSIZ {
		return fmt.Errorf("ethtool: device name %q is too long", dev)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("ethtool: socket: %w", err)
	}
	defer unix.Close(fd)
	var ifr ifreqData
	copy(ifr.name[:], dev)
	ifr.data = v
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	if errno != 0 {
		return errno
	}
	return nil
}

// Get reports whether the offload is on for the device.
func Get(dev string, o Offload) (bool, error) {
	v := ethtoolValue{cmd: o.get}
	if err := call(dev, &v); err != nil {
		return false, fmt.Errorf("ethtool: get %s of %s: %w", o.Name, dev, err)
	}
	return v.data != 0, nil
}

// Set switches the offload on or off for the device.
func Set(dev string, o Offload, on bool) error {
	v := ethtoolValue{cmd: o.set}
	if on {
		v.data = 1
	}
	if err := call(dev, &v); err != nil {
		return fmt.Errorf("ethtool: set %s of %s to %v: %w", o.Name, dev, on, err)
	}
	return nil
}
