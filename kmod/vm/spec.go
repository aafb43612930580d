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
}

// mount is a 9p share: its tag and where the guest mounts it.
type mount struct {
	Tag      string `json:"tag"`
	Path     string `json:"path"`
	ReadOnly bool   `json:"ro"`
}
