//go:build linux

package ethtool

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Commands of <linux/ethtool.h> that read a device's settings.
const (
	cmdGetDrvInfo   = 0x03 // ETHTOOL_GDRVINFO
	cmdGetCoalesce  = 0x0e // ETHTOOL_GCOALESCE
	cmdGetRingParam = 0x10 // ETHTOOL_GRINGPARAM
	cmdGetChannels  = 0x3c // ETHTOOL_GCHANNELS
)

// ErrNotSupported is returned (wrapped) for a setting the device's driver
// does not report (veth has no rings or coalescing).
var ErrNotSupported = errors.New("the driver does not report it")

// drvInfo is struct ethtool_drvinfo (196 bytes).
type drvInfo struct {
	cmd         uint32
	driver      [32]byte
	version     [32]byte
	fwVersion   [32]byte
	busInfo     [32]byte
	eromVersion [32]byte
	_           [12]byte
	nPrivFlags  uint32
	nStats      uint32
	testinfoLen uint32
	eedumpLen   uint32
	regdumpLen  uint32
}

// DriverInfo is what `ethtool -i` shows.
type DriverInfo struct {
	Driver   string `json:"driver"`
	Version  string `json:"version,omitempty"`
	Firmware string `json:"firmware,omitempty"`
	BusInfo  string `json:"bus_info,omitempty"`
}

// Rings are the device's ring sizes and their maxima (`ethtool -g`).
type Rings struct {
	RX    int `json:"rx"`
	RXMax int `json:"rx_max"`
	TX    int `json:"tx"`
	TXMax int `json:"tx_max"`
}

// Channels are the device's queue counts and their maxima (`ethtool -l`).
type Channels struct {
	RX       int `json:"rx"`
	TX       int `json:"tx"`
	Other    int `json:"other"`
	Combined int `json:"combined"`
	MaxRX    int `json:"max_rx"`
	MaxTX    int `json:"max_tx"`
	MaxComb  int `json:"max_combined"`
}

// Coalesce is the interrupt coalescing that shapes latency and CPU per
// packet (`ethtool -c`, the fields that matter for a benchmark).
type Coalesce struct {
	RXUsecs    int  `json:"rx_usecs"`
	RXFrames   int  `json:"rx_frames"`
	TXUsecs    int  `json:"tx_usecs"`
	TXFrames   int  `json:"tx_frames"`
	AdaptiveRX bool `json:"adaptive_rx"`
	AdaptiveTX bool `json:"adaptive_tx"`
}

func get(dev, what string, v unsafe.Pointer) error {
	if err := callPtr(dev, v); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			err = fmt.Errorf("%w (%v)", ErrNotSupported, err)
		}
		return fmt.Errorf("ethtool: %s of %s: %w", what, dev, err)
	}
	return nil
}

// GetDriverInfo reads the device's driver, its version, the firmware and
// the bus address.
func GetDriverInfo(dev string) (DriverInfo, error) {
	v := drvInfo{cmd: cmdGetDrvInfo}
	if err := get(dev, "driver info", unsafe.Pointer(&v)); err != nil {
		return DriverInfo{}, err
	}
	return DriverInfo{
		Driver:   unix.ByteSliceToString(v.driver[:]),
		Version:  unix.ByteSliceToString(v.version[:]),
		Firmware: unix.ByteSliceToString(v.fwVersion[:]),
		BusInfo:  unix.ByteSliceToString(v.busInfo[:]),
	}, nil
}

// GetRings reads the device's ring sizes (struct ethtool_ringparam).
func GetRings(dev string) (Rings, error) {
	var v [9]uint32 // cmd, rx/mini/jumbo/tx max, rx/mini/jumbo/tx pending
	v[0] = cmdGetRingParam
	if err := get(dev, "ring sizes", unsafe.Pointer(&v)); err != nil {
		return Rings{}, err
	}
	return Rings{RXMax: int(v[1]), TXMax: int(v[4]), RX: int(v[5]), TX: int(v[8])}, nil
}

// GetChannels reads the device's queue counts (struct ethtool_channels).
func GetChannels(dev string) (Channels, error) {
	var v [9]uint32 // cmd, max rx/tx/other/combined, rx/tx/other/combined
	v[0] = cmdGetChannels
	if err := get(dev, "channels", unsafe.Pointer(&v)); err != nil {
		return Channels{}, err
	}
	return Channels{MaxRX: int(v[1]), MaxTX: int(v[2]), MaxComb: int(v[4]),
		RX: int(v[5]), TX: int(v[6]), Other: int(v[7]), Combined: int(v[8])}, nil
}

// GetCoalesce reads the device's interrupt coalescing (struct
// ethtool_coalesce).
func GetCoalesce(dev string) (Coalesce, error) {
	var v [23]uint32
	v[0] = cmdGetCoalesce
	if err := get(dev, "coalescing", unsafe.Pointer(&v)); err != nil {
		return Coalesce{}, err
	}
	return Coalesce{RXUsecs: int(v[1]), RXFrames: int(v[2]), TXUsecs: int(v[5]), TXFrames: int(v[6]),
		AdaptiveRX: v[10] != 0, AdaptiveTX: v[11] != 0}, nil
}
