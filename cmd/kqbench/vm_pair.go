//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"kquic.dev/bench/matrix"
	"kquic.dev/kmod/vm"
)

// pairFlags are the second guest's settings and the link's, for `vm
// --peer-cmd`: B takes A's settings unless told otherwise.
type pairFlags struct {
	peerCmd         string
	kernel, modules string
	module, load    []string
	cpus, memory    int
	backend         string
	mtu, queues     int
	offloads        []string
	grace           time.Duration
}

func (p *pairFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&p.peerCmd, "peer-cmd", "", "boot a second guest (B) joined to this one (A) by a virtio-net link and run this shell command in it: the pair mode")
	p.registerB(cmd)
}

// registerB registers guest B's flags and the link's, for `vm --peer-cmd`
// and `matrix --vm-peer`.
func (p *pairFlags) registerB(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&p.kernel, "b-kernel", "", "guest B's kernel image (default: A's); needs --b-modules")
	f.StringVar(&p.modules, "b-modules", "", "guest B's module tree (default: A's)")
	f.StringSliceVar(&p.module, "b-module", nil, "guest B's out-of-tree module files, or src:DIR[@REF] (default: A's, from --module or $"+envModule+"); none for none")
	f.StringSliceVar(&p.load, "b-load", nil, "modules of B's tree to load (default: A's --load)")
	f.IntVar(&p.cpus, "b-cpus", 0, "guest B's vCPUs (default: A's)")
	f.IntVar(&p.memory, "b-memory", 0, "guest B's memory in MiB (default: A's)")
	f.StringVar(&p.backend, "link-backend", "auto", "the link: tap (virtio-net headers, so TSO and checksum offload, multiqueue; needs root), socket (a Unix socket pair: no TSO, GSO or checksum offload, one queue, no privilege) or auto (tap where possible)")
	f.IntVar(&p.mtu, "link-mtu", 1500, "MTU of both ends of the link")
	f.IntVar(&p.queues, "link-queues", 1, "virtio-net queue pairs of each end (tap link only)")
	f.StringSliceVar(&p.offloads, "link-offload", nil, "offloads to switch at both ends before the commands start (tso=off,gso=off,gro=off,tx-checksum=off,rx-checksum=off,sg=off; rx-gro-hw=off: receive MTU-sized frames, the peer's TSO packets cut on the way, as from a wire; matrix --vm-peer's default)")
	f.DurationVar(&p.grace, "peer-grace", vm.DefaultPeerGrace, "how long B's command has to end after SIGTERM, once A's has ended")
}

// pairConfig derives guest B's config from A's and the flags.
func (p *pairFlags) pairConfig(cmd *cobra.Command, a vm.Config, args []string) (vm.PairConfig, error) {
	f := cmd.Flags()
	b := a
	if p.kernel != "" || p.modules != "" {
		if p.kernel == "" || p.modules == "" {
			return vm.PairConfig{}, errors.New("vm: --b-kernel and --b-modules go together: give guest B's kernel image and its module tree")
		}
		b.Kernel, b.Modules = p.kernel, p.modules
	}
	if f.Changed("b-module") {
		var mods []string
		for _, m := range matrix.SplitList(p.module) {
			if m != "none" {
				mods = append(mods, m)
			}
		}
		var err error
		if b.ModuleFiles, err = resolveModules(cmd, kernelFlagsOf(cmd), p.kernel != "" || customKernel(cmd), mods); err != nil {
			return vm.PairConfig{}, fmt.Errorf("--b-module: %w", err)
		}
	}
	if f.Changed("b-load") {
		b.Load = matrix.SplitList(p.load)
	}
	if p.cpus != 0 {
		b.CPUs = p.cpus
	}
	if p.memory != 0 {
		b.Memory = p.memory
	}
	offloads, err := vm.ParseOffloads(matrix.SplitList(p.offloads))
	if err != nil {
		return vm.PairConfig{}, err
	}
	// B's output is told from A's by its prefix, on standard error.
	b.Stdout = newPrefixWriter(cmd.ErrOrStderr(), "[B] ")
	b.Stderr = b.Stdout
	b.Stdin = nil
	if a.Console != nil {
		a.Console = newPrefixWriter(cmd.ErrOrStderr(), "[A console] ")
		b.Console = newPrefixWriter(cmd.ErrOrStderr(), "[B console] ")
	}
	b.Timeout = 0 // RunPair gives the peer A's and the grace
	return vm.PairConfig{
		A: a, B: b, ArgsA: args, ArgsB: []string{"/bin/sh", "-c", p.peerCmd},
		Link:      vm.Link{Backend: p.backend, MTU: p.mtu, Queues: p.queues, Offloads: offloads},
		PeerGrace: p.grace,
	}, nil
}

// runPair boots the pair, prints what each guest reported and how it
// ended, and returns A's exit status as kqbench's.
func (p *pairFlags) runPair(cmd *cobra.Command, a vm.Config, args []string) error {
	pc, err := p.pairConfig(cmd, a, args)
	if err != nil {
		return err
	}
	res, err := vm.RunPair(cmd.Context(), pc)
	for _, w := range []io.Writer{pc.B.Stdout, pc.A.Console, pc.B.Console} {
		if pw, ok := w.(*prefixWriter); ok {
			pw.flush()
		}
	}
	if res != nil {
		writePairSummary(cmd.ErrOrStderr(), res)
	}
	var exit *vm.ExitError
	if errors.As(err, &exit) && exit.Guest == "A" {
		if err.Error() != exit.Error() {
			fmt.Fprintln(cmd.ErrOrStderr(), "kqbench vm:", err)
		}
		return exit
	}
	if err != nil {
		// Guest B's failure is the pair's (status 125), never B's exit
		// status passed off as A's.
		return errors.New(err.Error())
	}
	return nil
}

func writePairSummary(w io.Writer, res *vm.PairResult) {
	fmt.Fprintf(w, "kqbench vm: link %s, MTU %d, %d queue(s)\n", res.Link.Backend, res.Link.MTU, res.Link.Queues)
	for _, r := range []*vm.Result{res.A, res.B} {
		if r == nil {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "kqbench vm: guest %s:", r.Name)
		if in := r.Info; in != nil {
			fmt.Fprintf(&b, " kernel %s, boot %s", in.Kernel, in.BootID)
			if n := in.NIC; n != nil {
				fmt.Fprintf(&b, ", %s %s %s MTU %d, queues %d of %d, offloads %s", n.Dev, n.Driver.Driver, n.Addr, n.MTU, n.Queues, n.MaxQueues, offloadList(n.Offloads))
			}
			if len(in.Modules) == 0 {
				b.WriteString(", no out-of-tree module")
			}
			for _, m := range in.Modules {
				fmt.Fprintf(&b, ", module %s (version %q, srcversion %s, build ID %s)", m.Name, m.Version, m.Srcversion, m.BuildID)
			}
		}
		switch {
		case r.Stopped && r.ExitCode >= 0:
			fmt.Fprintf(&b, "; stopped, exit %d", r.ExitCode)
		case r.Stopped:
			b.WriteString("; stopped")
		case r.ExitCode >= 0:
			fmt.Fprintf(&b, "; exit %d", r.ExitCode)
		default:
			b.WriteString("; no exit status (see the error)")
		}
		fmt.Fprintf(&b, " (boot %v, run %v)", r.Boot.Round(time.Millisecond), r.Run.Round(time.Millisecond))
		fmt.Fprintln(w, b.String())
	}
}

func offloadList(m map[string]bool) string {
	var s []string
	for k, on := range m {
		v := "off"
		if on {
			v = "on"
		}
		s = append(s, k+"="+v)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

// prefixWriter writes whole lines to w, each after prefix; writers made on
// the same w share its lock, so the lines of two guests do not interleave.
type prefixWriter struct {
	w      io.Writer
	prefix []byte
	part   []byte
}

var prefixMu sync.Mutex

func newPrefixWriter(w io.Writer, prefix string) *prefixWriter {
	return &prefixWriter{w: w, prefix: []byte(prefix)}
}

// flush writes a last line that did not end in a newline.
func (p *prefixWriter) flush() {
	if len(p.part) > 0 {
		p.Write([]byte("\n"))
	}
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	prefixMu.Lock()
	defer prefixMu.Unlock()
	p.part = append(p.part, b...)
	for {
		i := bytes.IndexByte(p.part, '\n')
		if i < 0 {
			break
		}
		line := append(append([]byte(nil), p.prefix...), p.part[:i+1]...)
		p.part = p.part[i+1:]
		if _, err := p.w.Write(line); err != nil {
			return len(b), err
		}
	}
	return len(b), nil
}
