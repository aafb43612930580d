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
	// Mode is the cell's mode where its key is its mode's (ModeSpec.Key),
	// and ReqSize and Conns are the request size and connection count of
	// a cell that sends requests on several connections (Size is then the
	// response's).
	Mode    Mode   `json:"mode,omitempty"`
	ReqSize int    `json:"req_size,omitempty"`
	Conns   int    `json:"conns,omitempty"`
	Netem   string `json:"netem,omitempty"`
	CC      string `json:"cc,omitempty"`
	// Mux carries a TCP-based transport's streams over one connection in
	// frames (as HTTP/2 does) instead of one connection each.
	Mux bool `json:"mux,omitempty"`
	// Early marks a cell whose connections resume a session and send
	// their request as 0-RTT data.
	Early bool `json:"early,omitempty"`
	// Driver is the driver of a cell measured by another than this
	// process's Go transports (a registered driver), empty for those (so
	// that a go-only run's keys are what they always were).
	Driver Driver `json:"driver,omitempty"`
	// Workload is the workload of a cell of a mode that has several (the
	// h3 mode's download, objects, page, setup-...).
	Workload string `json:"workload,omitempty"`
	// Send is how the cell's sender hands its messages to the kernel
	// where a mode has that axis (Spec.Send: sendfile, zerocopy, ...);
	// "" is the transport's own write, so that the keys of a run without
	// the axis are what they always were.
	Send string `json:"send,omitempty"`
}

// Key identifies the cell in a results document: its mode's key
// (ModeSpec.Key, DefaultKey for a mode without one), then the suffixes of
// the settings every cell may have.
func (c Cell) Key() string {
	k := ""
	if ms, err := ModeSpecOf(c.Mode); err == nil && ms.Key != nil {
		k = ms.Key(c)
	} else {
		k = DefaultKey(c)
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
	if c.Driver != "" {
		k += "/driver=" + string(c.Driver)
	}
	if c.Send != "" {
		k += "/send=" + c.Send
	}
	return k
}

// DefaultKey is the key of a goodput-shaped cell (the default mode's)
// before the suffixes every key has.
func DefaultKey(c Cell) string {
	return fmt.Sprintf("%s/size=%d/mtu=%d/gso=%s/crypto=%s/%s/streams=%d",
		c.Transport, c.Size, c.MTU, OnOff(c.GSO), OnOff(c.Crypto), c.Direction, c.Streams)
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

// DefaultCells enumerates a matrix of goodput-shaped cells (the default
// mode's): every direction, encryption, congestion control, size,
// transport and driver per MTU and GSO setting.
func (s *Spec) DefaultCells() []Cell {
	var out []Cell
	for _, mtu := range s.MTUs {
		for _, gso := range s.GSO {
			for _, dir := range s.Directions {
				for _, crypto := range s.Crypto {
					for _, cc := range s.CCAxis() {
						for _, size := range s.Sizes {
							for _, t := range s.Transports {
								for _, d := range s.DriverAxis() {
									for _, m := range s.SendAxis() {
										out = append(out, Cell{Transport: t, Size: size, MTU: mtu, GSO: gso, Crypto: crypto, Direction: dir, Streams: s.Streams, Netem: s.Netem, CC: cc, Driver: CellDriver(d), Send: m})
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

// SendAxis is the send methods the cells take, as Cell.Send spells them:
// "" (the transport's write) without Spec.Send, and for DefaultSend in it.
func (s *Spec) SendAxis() []string {
	if len(s.Send) == 0 {
		return []string{""}
	}
	out := make([]string, len(s.Send))
	for i, m := range s.Send {
		if m != DefaultSend {
			out[i] = m
		}
	}
	return out
}

// DefaultSend is the send method a cell's Send of "" is: the transport's
// own write.
const DefaultSend = "write"

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
