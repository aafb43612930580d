//go:build linux

package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"kquic.dev/bench/remote"
	"kquic.dev/bench/topo"
)

// tokenEnv is where --token defaults from, so the secret need not show in
// the process list.
const tokenEnv = "KQBENCH_TOKEN"

func newServerCmd() *cobra.Command {
	var listen, token, dev string
	var idle time.Duration
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Serve the peer end of two-host benchmarks (kqbench client, kqbench matrix --peer)",
		Long: `Wait for kqbench clients on --listen: a control channel over TLS on which the
client proves the shared --token (and the server proves it back). For each
cell the server sets the MTU and offloads of --dev, runs the transport's
server end, and reports the bytes it received and its CPU use. One client at a
time (the others are told it is busy); when it disconnects the server puts
--dev back as it found it. A client silent for longer than its sample's time
plus 2 minutes (or --idle) is cut off, told why, and --dev put back, so a
client that hangs does not keep the others out.

The server makes a new certificate at every start and prints its SHA-256
fingerprint: give it to the client's --fingerprint. It needs root (MTU and
offloads). The token defaults to $KQBENCH_TOKEN.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if token == "" {
				token = os.Getenv(tokenEnv)
			}
			if token == "" {
				return errors.New("server: no token: give --token (or $KQBENCH_TOKEN) a shared secret, e.g. from `openssl rand -hex 16`, and the same to the client")
			}
			if dev == "" {
				return errors.New("server: --dev is required: the device the benchmark traffic arrives on (see `ip route get CLIENT-ADDRESS`)")
			}
			if idle < 0 {
				return fmt.Errorf("server: --idle %v: give a positive time, or 0 for the client's sample time plus %v", idle, remote.IdleMargin)
			}
			if os.Geteuid() != 0 {
				return fmt.Errorf("server: needs root to set the MTU and offloads of %s: run it as root", dev)
			}
			d, err := topo.OpenDevice(dev, nil)
			if err != nil {
				return fmt.Errorf("server: %w", err)
			}
			defer d.Close()
			srv, err := remote.NewServer(token, d, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			srv.SetIdleLimit(idle)
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("server: listen on %s: %w (is another kqbench server running? choose another --listen)", listen, err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "kqbench server: listening on %s, device %s, control protocol version %d\n", ln.Addr(), dev, remote.Version)
			fmt.Fprintln(out, remote.FingerprintLine+srv.Fingerprint())
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ln) }()
			select {
			case <-cmd.Context().Done():
				ln.Close()
				<-done
				err = nil
			case err = <-done:
				ln.Close()
			}
			srv.Close()
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", ":7070", "address of the control channel")
	f.StringVar(&token, "token", "", "shared secret the clients must prove (default $"+tokenEnv+")")
	f.StringVar(&dev, "dev", "", "network device whose MTU and offloads each cell sets (required)")
	f.DurationVar(&idle, "idle", 0, "cut off a client silent for this long (default: the client's sample time plus "+remote.IdleMargin.String()+")")
	return cmd
}
