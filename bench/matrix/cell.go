package matrix

import (
	"fmt"

	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

// Cell is one point of the matrix.
type Cell struct {
	Transport string    `json:"transport"`
	Size      int       `json:"size"`
	MTU       int       `json:"mtu"`
	GSO       bool      `json:"gso"`
	Crypto    bool      `json:"crypto"`
	Direction Direction `json:"direction"`
	Streams   int       `json:"streams"`
	// Mode, ReqSize and Conns are set in rr mode (Size is then the
	// response's).
	Mode    Mode   `json:"mode,omitempty"`
	ReqSize int    `json:"req_size,omitempty"`
	Conns   int    `json:"conns,omitempty"`
	Netem   string `json:"netem,omitempty"`
	CC      string `json:"cc,omitempty"`
	// Mux, in streams mode, carries a TCP-based transport's streams over
	// one connection in frames (as HTTP/2 does) instead of one connection
	// each.
	Mux bool `json:"mux,omitempty"`
	// Early marks a handshake-mode cell whose connections resume a session
	// and send their request as 0-RTT data.
	Early bool `json:"early,omitempty"`
	// Driver is "native" for a cell measured with the C tools, empty for
	// this process's Go transports (so that a go-only run's keys are what
	// they always were).
	Driver Driver `json:"driver,omitempty"`
	// Workload is an h3-mode cell's web workload (ModeH3: download,
	// objects, page, setup-...).
	Workload string `json:"workload,omitempty"`
}

// Key identifies the cell in a results document.
func (c Cell) Key() string {
	var k string
	switch c.Mode {
	case ModeRR:
		k = c.rrKey()
	case ModeH3:
		k = c.h3Key()
	default:
		k = fmt.Sprintf("%s/size=%d/mtu=%d/gso=%s/crypto=%s/%s/streams=%d",
			c.Transport, c.Size, c.MTU, OnOff(c.GSO), OnOff(c.Crypto), c.Direction, c.Streams)
	}
	if c.Early {
		k += "/0rtt"
	}
	if c.Netem != "" {
		k += "/netem=" + c.Netem
	}
	if c.CC != "" {
		k += "/cc=" + c.CC
	}
	if c.Mux {
		k += "/mux"
	}
	if c.Driver == DriverNative {
		k += "/driver=native"
	}
	return k
}

// OnOff is "on" or "off", as keys and tables spell a setting.
func OnOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// Cells enumerates the matrix with its mode's enumeration (ModeSpecOf),
// grouped by topology settings (MTU, GSO) so that the devices change as
// rarely as possible; nil for a mode that is not registered.
func (s *Spec) Cells() []Cell {
	ms, err := ModeSpecOf(s.Mode)
	if err != nil {
		return nil
	}
	return ms.cells(s)
}

// bulkCells enumerates a matrix of goodput-shaped cells: every direction,
// encryption, congestion control, size, transport and driver per MTU and
// GSO setting; in streams mode the TCP transports' cells also come
// multiplexed (Cell.Mux).
func (s *Spec) bulkCells() []Cell {
	var out []Cell
	for _, mtu := range s.MTUs {
		for _, gso := range s.GSO {
			for _, dir := range s.Directions {
				for _, crypto := range s.Crypto {
					for _, cc := range s.CCAxis() {
						for _, size := range s.Sizes {
							for _, t := range s.Transports {
								for _, d := range s.DriverAxis() {
									c := Cell{Transport: t, Size: size, MTU: mtu, GSO: gso, Crypto: crypto, Direction: dir, Streams: s.Streams, Netem: s.Netem, CC: cc, Driver: CellDriver(d)}
									out = append(out, c)
									if s.Mode == ModeStreams && Muxable(t) && c.Driver == "" {
										c.Mux = true
										out = append(out, c)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

// CCAxis is the congestion controls the cells take: "" (the defaults)
// without --cc.
func (s *Spec) CCAxis() []string {
	if len(s.CC) == 0 {
		return []string{""}
	}
	return s.CC
}

// Impairment is the spec's impairment (Validate has checked it).
func (s *Spec) Impairment() topo.Netem {
	n, _ := topo.ParseNetem(s.Netem)
	return n
}

// Options are the transport options of a cell of the spec.
func (s *Spec) Options(c Cell) transport.Options {
	o := c.Options()
	o.Window, o.UDPRcvBuf = s.Window, s.UDPRcvBuf
	o.ReadSize = s.ReadSizeOf(c.Size)
	return o
}

// Options are the transport options the cell itself decides.
func (c Cell) Options() transport.Options {
	return transport.Options{Crypto: c.Crypto, GSO: c.GSO, CC: c.CC}
}

// Muxable reports whether the transport carries streams over TCP, where
// streams mode also runs them multiplexed over one connection.
func Muxable(transport string) bool { return transport == "tcp" || transport == "ktls" }
