package matrix

// Mode is what a matrix's cells measure (Spec.Mode, Cell.Mode). Its JSON
// form is the name, as results files have always spelled it.
type Mode string

// The modes.
const (
	ModeBulk = Mode("bulk") // streams in one direction, goodput (the default, also when empty)
	ModeRR   = Mode("rr")   // request/response: round trips, latency percentiles
	// ModeStreams measures per-stream completion times: each sample sends
	// Streams objects of Size bytes at once, client to server, and times
	// each until the server has all of it, hash-checked. The QUIC
	// transports carry each object on its own stream; TCP and kTLS carry
	// them either multiplexed over one connection in frames, taking turns
	// as HTTP/2's streams of equal weight do (Cell.Mux), so a lost segment
	// holds every stream behind it (head-of-line blocking), or on a
	// connection each (the second baseline).
	ModeStreams = Mode("streams")
	// ModeHandshake measures connection setups.
	ModeHandshake = Mode("handshake")
)

// Direction is which way a cell's bytes go (Spec.Directions,
// Cell.Direction).
type Direction string

// The directions. An rr-mode cell's Direction is DirectionRR: both ways, a
// request and its response.
const (
	Up          = Direction("up")   // client to server
	Down        = Direction("down") // server to client
	DirectionRR = Direction(ModeRR)
)

// Driver is what moves a cell's bytes (Spec.Drivers, Cell.Driver).
type Driver string

// The drivers.
const (
	// DriverGo measures this process's transports, through the Go
	// bindings (the default; a Cell records it as "").
	DriverGo = Driver("go")
	// DriverNative measures C tools between the same two namespaces: the
	// module's perf_test for kquic, iperf3 for tcp, openssl s_server and
	// s_client -ktls for ktls.
	DriverNative = Driver("native")
)
