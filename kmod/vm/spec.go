//go:build linux

package vm

// The names the host and the guest agree on.
const (
	// initEnv is set on the kernel command line; the kernel passes it to init
	// as an environment variable.
	initEnv = "KQVM_INIT"
	// guestMarker is on the command line of every guest, for [InGuest].
	guestMarker = initEnv + "=1"
	rootTag     = "kqvm-root"
	specPath    = "/kqvm.json"
	portStdout  = "kqvm.stdout"
	portStderr  = "kqvm.stderr"
	portStatus  = "kqvm.status"
	portStdin   = "kqvm.stdin"
	// portCtl carries the host's requests to init ("term": end the command).
	portCtl = "kqvm.ctl"
)

// spec is the job the host hands to the guest's init, as JSON in the initramfs.
type spec struct {
	Args []string `json:"args"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
	// EarlyModules are initramfs paths of the modules needed to mount the root
	// (the 9p stack), in load order.
	EarlyModules []string `json:"early_modules"`
	// Modules are paths (as seen after the root is mounted) to load, in order.
	Modules []string `json:"modules"`
	// ModulesDir is the module tree to show at /lib/modules/<Release>.
	ModulesDir string  `json:"modules_dir"`
	Release    string  `json:"release"`
	Shares     []mount `json:"shares"`
	// Stdin says the host feeds the command's standard input through the
	// stdin port (else it is /dev/null).
	Stdin bool `json:"stdin,omitempty"`
	// Report names the out-of-tree modules whose identity the guest reports.
	Report []string `json:"report,omitempty"`
	// Name is the guest's name in a pair ("a", "b"), else empty.
	Name string `json:"name,omitempty"`
	// NIC is the guest's end of a pair's link, else nil.
	NIC *nicSpec `json:"nic,omitempty"`
	// FwdNIC is the forwarding device (Config.Forwards), else nil.
	FwdNIC *nicSpec `json:"fwd_nic,omitempty"`
	// WaitGo says init waits for "go" on the control port before it starts
	// the command (a pair starts both commands once both guests are up).
	WaitGo bool `json:"wait_go,omitempty"`
}

// nicSpec is how the guest's init configures its end of a link.
type nicSpec struct {
	// MAC identifies the device the harness gave the guest.
	MAC string `json:"mac"`
	// Addr is the address with prefix length ("10.77.0.1/24").
	Addr string `json:"addr"`
	// Peer is the other end's address and name.
	Peer     string `json:"peer"`
	PeerName string `json:"peer_name"`
	MTU      int    `json:"mtu"`
	// Offloads are switched before the command starts.
	Offloads map[string]bool `json:"offloads,omitempty"`
}

// mount is a 9p share: its tag and where the guest mounts it.
type mount struct {
	Tag      string `json:"tag"`
	Path     string `json:"path"`
	ReadOnly bool   `json:"ro"`
}
