//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"kquic.dev/bench"
	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/remote"
	"kquic.dev/bench/results"
	"kquic.dev/bench/topo"
)

// peerFlags find and authenticate a kqbench server, for `client` and
// `matrix --peer`.
type peerFlags struct {
	peer, token, fingerprint, dev string
}

func (p *peerFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&p.peer, "peer", p.peer, "HOST:PORT of the kqbench server on the other host")
	f.StringVar(&p.token, "token", "", "the server's shared secret (default $"+tokenEnv+")")
	f.StringVar(&p.fingerprint, "fingerprint", "", "SHA-256 of the server's certificate, as it printed (default: trust on first use; the token check still authenticates it)")
	f.StringVar(&p.dev, "dev", "", "this host's network device towards the peer, whose MTU and offloads each cell sets")
}

// peerSession is a connection to a kqbench server and this host's device.
type peerSession struct {
	c   *remote.Client
	dev *topo.Device
}

func (s *peerSession) Close() {
	s.c.Close()
	s.dev.Close()
}

// runner makes a Runner of two-host mode.
func (s *peerSession) runner(spec matrix.Spec, p *peerFlags) *bench.Runner {
	nic := host.ReadNIC(s.dev)
	s.c.SetSampleTime(spec.Warmup + spec.Time)
	return &bench.Runner{
		NIC:  &nic,
		Spec: spec, Command: os.Args, Client: s.dev, Server: s.c, Peer: s.c.Peer(), NICDriver: s.dev.Driver(),
		Topology: fmt.Sprintf("two hosts: %s on this host, kqbench server %s on its %s", s.dev.Name(), p.peer, s.c.Device()),
	}
}

// connect opens this host's device and the control connection, and says on
// w what the user should know (the fingerprint to pin, setup warnings).
func (p *peerFlags) connect(ctx context.Context, w io.Writer) (*peerSession, error) {
	if p.token == "" {
		p.token = os.Getenv(tokenEnv)
	}
	switch {
	case p.peer == "":
		return nil, errors.New("--peer HOST:PORT is required: the address of `kqbench server` on the other host")
	case p.token == "":
		return nil, errors.New("--token (or $KQBENCH_TOKEN) is required: the secret the kqbench server was started with")
	case p.dev == "":
		return nil, errors.New("--dev is required: this host's device towards the peer (see `ip route get PEER-ADDRESS`)")
	case os.Geteuid() != 0:
		return nil, fmt.Errorf("needs root to set the MTU and offloads of %s: run it as root", p.dev)
	}
	d, err := topo.OpenDevice(p.dev, nil)
	if err != nil {
		return nil, err
	}
	c, err := remote.Dial(ctx, p.peer, remote.Config{Token: p.token, Fingerprint: p.fingerprint})
	if err != nil {
		d.Close()
		return nil, err
	}
	if p.fingerprint == "" {
		fmt.Fprintf(w, "kqbench: the server's certificate has SHA-256 %s (it proved the token); pin it with --fingerprint %s\n", c.Fingerprint(), c.Fingerprint())
	}
	if warn := c.Warning(); warn != "" {
		fmt.Fprintln(w, "kqbench: warning:", warn)
	}
	if via, err := d.RouteDevice(c.PeerAddr()); err == nil && via != p.dev {
		fmt.Fprintf(w, "kqbench: warning: traffic to %v leaves through %s, not --dev %s: the MTU and offloads set on %s may not apply to it\n", c.PeerAddr(), via, p.dev, p.dev)
	}
	return &peerSession{c: c, dev: d}, nil
}

func newClientCmd() *cobra.Command {
	var (
		pf                              peerFlags
		tr, size, gso, crypto, dir, out string
		mtu, streams, repeat            int
		dur, warmup                     time.Duration
	)
	cmd := &cobra.Command{
		Use:   "client",
		Short: "Measure one cell against a kqbench server on another host",
		Long: `Measure one benchmark cell between this host and ` + "`kqbench server`" + ` on the peer:
both ends set the MTU and offloads of their --dev, the server runs the
transport's server end, and the receiver counts the goodput. Prints the
goodput and the CPU use of both hosts. For the whole matrix against a peer,
use kqbench matrix --peer.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sizes, err := parseSizes([]string{size})
			if err != nil {
				return err
			}
			g, err := matrix.ParseOnOff([]string{gso})
			if err != nil {
				return fmt.Errorf("--gso: %w", err)
			}
			cr, err := matrix.ParseOnOff([]string{crypto})
			if err != nil {
				return fmt.Errorf("--crypto: %w", err)
			}
			spec := matrix.Spec{Transports: []string{tr}, Sizes: sizes, MTUs: []int{mtu}, GSO: g, Crypto: cr,
				Directions: []matrix.Direction{matrix.Direction(dir)}, Streams: streams, Time: dur, Warmup: warmup, Repeat: repeat}
			if err := spec.Validate(); err != nil {
				return fmt.Errorf("client: %w", err)
			}
			s, err := pf.connect(cmd.Context(), cmd.ErrOrStderr())
			if err != nil {
				return fmt.Errorf("client: %w", err)
			}
			defer s.Close()
			r := s.runner(spec, &pf)
			r.Out, r.Log = out, io.Discard
			doc, err := r.Run(cmd.Context())
			if err != nil {
				return fmt.Errorf("client: %w", err)
			}
			return printCell(cmd.OutOrStdout(), &doc.Cells[0])
		},
	}
	pf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&tr, "transport", "tcp", "transport: kquic, ktls, tcp, quic-go")
	f.StringVar(&size, "size", "64K", "message size (bytes, or with K/M suffix)")
	f.IntVar(&mtu, "mtu", 1500, "MTU of both ends' --dev")
	f.StringVar(&gso, "gso", "on", "segmentation offload: on, off")
	f.StringVar(&crypto, "crypto", "on", "encryption: on, off")
	f.StringVar(&dir, "direction", "up", "up (client to server), down")
	f.IntVar(&streams, "streams", 1, "parallel streams")
	f.DurationVar(&dur, "time", 10*time.Second, "measured time per sample")
	f.DurationVar(&warmup, "warmup", time.Second, "unmeasured time before each sample")
	f.IntVar(&repeat, "repeat", 1, "samples (the median is reported)")
	f.StringVar(&out, "out", "", "also write the results document (JSON) here")
	return cmd
}

// printCell prints a cell's goodput and both hosts' CPU, or why it has none.
func printCell(w io.Writer, c *results.CellResult) error {
	switch c.Status {
	case results.StatusOK:
	case results.StatusFailed:
		return fmt.Errorf("%s failed: %s", c.Key, c.Error)
	default:
		return fmt.Errorf("%s: %s: %s", c.Key, c.Status, c.Note)
	}
	fmt.Fprintf(w, "%s: %.0f Mbit/s (median of %d", c.Key, c.MedianBps/1e6, len(c.Samples))
	if len(c.Samples) > 1 {
		fmt.Fprintf(w, ", spread %.0f%%", c.Spread*100)
	}
	fmt.Fprintln(w, ")")
	var cl, sv results.CPU
	n := 0
	for _, s := range c.Samples {
		cl.BusyCores += s.CPU.BusyCores
		cl.SoftirqCores += s.CPU.SoftirqCores
		cl.ProcessCores += s.CPU.ProcessCores
		if s.ServerCPU != nil {
			sv.BusyCores += s.ServerCPU.BusyCores
			sv.SoftirqCores += s.ServerCPU.SoftirqCores
			sv.ProcessCores += s.ServerCPU.ProcessCores
			n++
		}
	}
	k := float64(len(c.Samples))
	fmt.Fprintf(w, "  client CPU: %.2f cores busy (%.2f softirq), kqbench %.2f\n", cl.BusyCores/k, cl.SoftirqCores/k, cl.ProcessCores/k)
	if n > 0 {
		fmt.Fprintf(w, "  server CPU: %.2f cores busy (%.2f softirq), kqbench %.2f\n", sv.BusyCores/float64(n), sv.SoftirqCores/float64(n), sv.ProcessCores/float64(n))
	}
	fmt.Fprintf(w, "  devices: %s\n  server's: %s\n", c.Offloads, c.PeerOffloads)
	return nil
}
