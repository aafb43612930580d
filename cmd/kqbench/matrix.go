//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"kquic.dev/bench"
	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	kqprofile "kquic.dev/bench/profile"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
	"kquic.dev/bench/transport"
	"kquic.dev/kmod/vm"
)

// matrixFlags are kqbench matrix's flags as given, and what check makes of
// them.
type matrixFlags struct {
	transports, sizes, mtus, gso, crypto, dirs []string
	spec                                       matrix.Spec
	out, csvOut                                string
	resume, inVM, quiet, explain, profile      bool
	vmPeer                                     bool
	vmPair                                     pairFlags
	captureDir                                 string
	affinity, label, preset, readSize          string
	profileFreq                                int
	drivers                                    []string
	vmf                                        vmFlags
	pf                                         peerFlags
	rf                                         modeFlags
	imf                                        impairFlags
	// notHere: the transports left out for not running here, with why
	// (check).
	notHere []string
}

func newMatrixCmd() *cobra.Command {
	m := &matrixFlags{spec: matrix.DefaultSpec()}
	cmd := &cobra.Command{
		Use:   "matrix",
		Short: "Compare kernel QUIC, kernel TLS, TCP and quic-go across sizes, MTUs, GSO and encryption",
		Long:  matrixHelp + registeredHelp() + vmPeerHelp,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return m.run(cmd) },
	}
	m.register(cmd)
	return cmd
}

// matrixHelp is matrix --help's text but for the modes', drivers' and
// presets' parts (registeredHelp) and --vm-peer's.
const matrixHelp = `Run every combination of the given transports, message sizes, MTUs, GSO on/off,
encryption on/off and directions over a veth pair between two network
namespaces that kqbench creates (and removes), and print goodput tables in the
shape of the kernel QUIC module's README. Every raw sample goes to a JSON
results file, written after each cell; --resume continues an interrupted run.

Without --transports, the transports that can run on this machine are used;
the others are listed as unavailable with the reason. --vm runs the matrix in
the qemu guest, where kernel QUIC (with $KQUIC_MODULE) and kernel TLS exist.

With --peer HOST:PORT the matrix runs between this host and ` + "`kqbench server`" + ` on
the peer instead: both set the MTU and offloads of their --dev per cell (and
put them back at the end), and each sample records both hosts' CPU.`

// register adds the flags to cmd.
func (m *matrixFlags) register(cmd *cobra.Command) {
	def := matrix.DefaultSpec()
	f := cmd.Flags()
	f.StringSliceVar(&m.transports, "transports", nil, "transports to compare: "+strings.Join(transport.Names(), ",")+" (default: those that run here)")
	f.StringSliceVar(&m.sizes, "sizes", []string{"1K", "4K", "16K", "64K"}, "message sizes (bytes, or with K/M suffix; up to 16M)")
	f.StringSliceVar(&m.mtus, "mtus", []string{"1500", "9000"}, "MTUs of the veth pair")
	f.StringSliceVar(&m.gso, "gso", []string{"on", "off"}, "segmentation offload: on, off")
	f.StringSliceVar(&m.crypto, "crypto", []string{"on", "off"}, "encryption: on, off (kquic's disable_1rtt_encryption; tcp is ktls's off)")
	f.StringSliceVar(&m.dirs, "direction", []string{"up"}, "up (client to server), down")
	f.IntVar(&m.spec.Streams, "streams", def.Streams, "parallel streams per cell")
	f.DurationVar(&m.spec.Time, "time", def.Time, "measured time per sample")
	f.DurationVar(&m.spec.Warmup, "warmup", def.Warmup, "unmeasured time before each sample")
	f.IntVar(&m.spec.Repeat, "repeat", def.Repeat, "samples per cell (median and spread are over these); alone, exactly this many")
	f.IntVar(&m.spec.MaxRepeat, "max-repeat", def.MaxRepeat, "more samples, up to this many, for a cell whose spread is over 25% after --repeat (the median's interval narrows with them); 0: none")
	f.StringVar(&m.out, "out", "", "results file (default results/matrix-<time>.json); never overwritten")
	f.StringVar(&m.csvOut, "csv", "", "CSV summary (default: the results file with .csv)")
	f.BoolVar(&m.resume, "resume", false, "continue the run in --out, keeping its finished cells")
	f.BoolVar(&m.explain, "explain", false, "count packets, syscalls and drops per cell with eBPF and kernel counters, and print why the transports differ")
	f.StringVar(&m.captureDir, "capture", "", "write a decryptable pcapng (TLS key log embedded) of every sample into this directory")
	f.StringVar(&m.label, "label", "", "name this run (before, after...) in its results and in kqbench compare's columns: an A/B across reboots on hardware")
	f.StringVar(&m.affinity, "affinity", "auto", "pin the client's and the server's streams to two CPUs, as iperf3 -A: auto (the first two this process may use; with --conns each connection's ends to CPUs of their own, apart where there are two per connection, else one shared, else an error), none, or CLIENT,SERVER (iperf3 -A's pair, shared by every connection) or one pair per connection, CLIENT,SERVER/CLIENT,SERVER/... (two-host mode: the client's only)")
	f.BoolVar(&m.profile, "profile", false, "record call graphs of the whole machine (perf record -a -g) over every sample's window; each cell's folded stacks go to <results>/profiles/ (needs perf: "+kqprofile.PerfPackage+")")
	f.IntVar(&m.profileFreq, "profile-freq", 0, "with --profile: perf's samples per second and CPU (default 999, 99 under emulation, where perf costs more)")
	f.StringSliceVar(&m.drivers, "driver", []string{string(matrix.DriverGo)}, driverUsage())
	f.StringVar(&m.readSize, "read-size", "auto", readSizeUsage())
	f.StringVar(&m.preset, "preset", "", presetUsage())
	f.BoolVar(&m.quiet, "quiet", false, "no progress output")
	f.BoolVar(&m.inVM, "vm", false, "run the matrix in the qemu guest (kernel QUIC with $KQUIC_MODULE, kernel TLS)")
	f.BoolVar(&m.vmPeer, "vm-peer", false, "run the matrix in two-host mode between two qemu guests joined by a virtio-net link: kqbench server in guest B, the matrix in guest A (--b-module, --b-kernel, --link-* for B and the link)")
	m.vmf.register(cmd)
	m.vmPair.registerB(cmd)
	m.pf.register(cmd)
	m.rf.register(cmd)
	m.imf.register(cmd)
	m.rf.noteCommon(cmd)
}

// check makes the run's spec of the flags, and its results and CSV files'
// names (creating the results directory): an error names the flag that is
// wrong.
func (m *matrixFlags) check(cmd *cobra.Command) error {
	var err error
	var pre *matrix.Preset
	if m.preset != "" {
		p, err := checkPreset(cmd, m.preset)
		if err != nil {
			return err
		}
		pre = &p
	}
	spec := &m.spec
	if cmd.Flags().Changed("transports") || pre != nil {
		spec.Transports = matrix.SplitList(m.transports)
	} else if !m.inVM {
		spec.Transports, m.notHere = availableTransports()
	}
	if cmd.Flags().Changed("repeat") && !cmd.Flags().Changed("max-repeat") {
		spec.MaxRepeat = 0 // --repeat N alone: exactly N samples per cell
	}
	if m.resume && m.out == "" {
		return errors.New("matrix: --resume continues the results file named by --out: give --out FILE (the path the interrupted run printed)")
	}
	if spec.Sizes, err = parseSizes(m.sizes); err != nil {
		return err
	}
	if spec.MTUs, err = matrix.ParseCounts(m.mtus, "MTU"); err != nil {
		return err
	}
	if spec.GSO, err = matrix.ParseOnOff(matrix.SplitList(m.gso)); err != nil {
		return fmt.Errorf("--gso: %w", err)
	}
	if spec.Crypto, err = matrix.ParseOnOff(matrix.SplitList(m.crypto)); err != nil {
		return fmt.Errorf("--crypto: %w", err)
	}
	spec.Directions = typedList[matrix.Direction](m.dirs)
	if strings.Trim(m.label, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
		return fmt.Errorf("matrix: --label %q: use letters, digits, '.', '_' and '-' (it becomes part of the file name)", m.label)
	}
	if spec.Affinity, err = matrix.ParseAffinity(m.affinity); err != nil {
		return fmt.Errorf("matrix: --%w", err)
	}
	if (m.inVM || m.vmPeer) && m.affinity == "auto" {
		// The guest pins to its own CPUs: check the connections against
		// those (it reads --affinity again itself).
		spec.Affinity = matrix.AutoAffinity(seq(m.vmf.cfg.CPUs))
	}
	if err := m.imf.apply(spec); err != nil {
		return err
	}
	if err := m.rf.apply(cmd, spec); err != nil {
		return err
	}
	if spec.Drivers = typedList[matrix.Driver](m.drivers); len(spec.Drivers) == 1 && spec.Drivers[0] == matrix.DriverGo {
		spec.Drivers = nil // the default: recorded as before
	}
	if pre != nil {
		pre.Apply(spec)
	}
	if spec.ReadSize, err = parseReadSize(m.readSize, spec.Drivers); err != nil {
		return fmt.Errorf("matrix: %w", err)
	}
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("matrix: %w", err)
	}
	if m.out == "" {
		name := "matrix-"
		if m.label != "" {
			name += m.label + "-"
		}
		m.out = filepath.Join("results", name+time.Now().Format("20060102-150405")+".json")
	}
	if err := os.MkdirAll(filepath.Dir(m.out), 0o755); err != nil {
		return fmt.Errorf("matrix: results directory: %w", err)
	}
	if m.csvOut == "" {
		m.csvOut = strings.TrimSuffix(m.out, ".json") + ".csv"
	}
	return nil
}

// run checks the flags and runs the matrix: between two guests
// (--vm-peer), in a guest (--vm), or here, against a peer or over a veth
// pair; then prints the tables.
func (m *matrixFlags) run(cmd *cobra.Command) error {
	if err := m.check(cmd); err != nil {
		return err
	}
	if m.vmPeer {
		if m.inVM || m.pf.peer != "" {
			return errors.New("matrix: --vm-peer runs both ends in guests of its own: leave out --vm and --peer")
		}
		return runMatrixVMPeer(cmd, &m.vmf, &m.vmPair, m.spec, m.out, m.csvOut, m.explain)
	}
	if m.inVM {
		if m.pf.peer != "" {
			return errors.New("matrix: --vm and --peer exclude each other: run kqbench matrix --peer on a host (or in a guest) that reaches the peer")
		}
		return runMatrixInVM(cmd, &m.vmf, m.spec, m.out, m.captureDir)
	}
	r, closePeer, err := m.runner(cmd)
	if err != nil {
		return err
	}
	defer closePeer()
	doc, err := r.Run(cmd.Context())
	if doc != nil {
		err = errors.Join(err, printMatrix(cmd.OutOrStdout(), doc, matrixOutput{
			out: m.out, csv: m.csvOut, explain: m.explain, captureDir: m.captureDir, notHere: m.notHere, profileDir: r.ProfileDir}))
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("matrix interrupted: the cells that finished are in %s; continue with --resume --out %s", m.out, m.out)
	}
	return err
}

// runner makes the Runner of a run on this host: against the peer (its
// control connection closed by closePeer), or over a veth pair.
func (m *matrixFlags) runner(cmd *cobra.Command) (r *bench.Runner, closePeer func(), err error) {
	r, closePeer = &bench.Runner{Spec: m.spec}, func() {}
	if m.pf.peer != "" {
		s, err := m.pf.connect(cmd.Context(), cmd.ErrOrStderr())
		if err != nil {
			return nil, nil, fmt.Errorf("matrix: %w", err)
		}
		r, closePeer = s.runner(m.spec, &m.pf), s.Close
	} else if m.pf.dev != "" || m.pf.token != "" || m.pf.fingerprint != "" {
		return nil, nil, errors.New("matrix: --dev, --token and --fingerprint are for two-host mode: add --peer HOST:PORT")
	}
	r.Out, r.Resume, r.Command, r.Label = m.out, m.resume, os.Args, m.label
	r.Explain, r.CaptureDir = m.explain, m.captureDir
	if m.profile {
		r.ProfileDir, r.ProfileFrequency = profileDir(m.out), m.profileFreq
	}
	if r.DriverOptions, err = m.rf.driverOptions(m.spec.Drivers); err != nil {
		closePeer()
		return nil, nil, fmt.Errorf("matrix: %w", err)
	}
	if m.captureDir != "" {
		if err := os.MkdirAll(m.captureDir, 0o755); err != nil {
			closePeer()
			return nil, nil, fmt.Errorf("matrix: --capture: %w", err)
		}
	}
	m.progress(cmd, r)
	return r, closePeer, nil
}

// progress shows the run's progress on stderr: a bar on a terminal, else
// the log; nothing with --quiet.
func (m *matrixFlags) progress(cmd *cobra.Command, r *bench.Runner) {
	stderr := cmd.ErrOrStderr()
	if term.IsTerminal(int(os.Stderr.Fd())) && !m.quiet {
		bar := progressbar.NewOptions(len(m.spec.Cells())*m.spec.Repeat,
			progressbar.OptionSetWriter(stderr), progressbar.OptionSetPredictTime(true),
			progressbar.OptionShowCount(), progressbar.OptionSetDescription("matrix"),
			progressbar.OptionClearOnFinish())
		r.Progress = func(done, total int, c matrix.Cell) {
			bar.ChangeMax(total) // cells that cannot run are not counted
			bar.Describe(c.Transport + " " + strconv.Itoa(c.Size))
			bar.Set(done)
		}
	} else if !m.quiet {
		r.Log = stderr
	}
}

// matrixOutput is where a matrix run's files went, for printMatrix.
type matrixOutput struct {
	out, csv, captureDir, profileDir string // profileDir: "" without --profile
	explain                          bool
	notHere                          []string // transports left out, with why
}

// printMatrix prints the tables of a run's results and where its files are,
// and writes the CSV summary. A CSV it cannot write is an error that names
// it and says what to do; the results file stays as the run wrote it.
func printMatrix(w io.Writer, doc *results.Document, o matrixOutput) error {
	fmt.Fprintln(w)
	render.WriteTables(w, doc)
	render.WriteRatios(w, doc)
	if o.explain {
		fmt.Fprintln(w)
		render.WriteExplain(w, doc)
	}
	if o.captureDir != "" {
		fmt.Fprintf(w, "\ncaptures: %s (pcapng with the TLS key log embedded; also a .keys file each)\n", o.captureDir)
	}
	csvErr := writeCSVFile(o.csv, doc)
	if len(o.notHere) > 0 {
		fmt.Fprintf(w, "\nnot run on this machine:\n  %s\n(kqbench matrix --vm runs them in the qemu guest; kernel QUIC needs KQUIC_MODULE=/path/quic.ko)\n", strings.Join(o.notHere, "\n  "))
	}
	if o.profileDir != "" {
		fmt.Fprintf(w, "\nprofiles: %s (folded stacks and a flamegraph per cell; kqbench flame draws others from the .folded files)\n", o.profileDir)
	}
	if csvErr != nil {
		fmt.Fprintf(w, "\nresults: %s (every sample); no CSV summary\n", o.out)
		return fmt.Errorf("matrix: the CSV summary %s was not written: %w; the results are complete in %s: write the CSV from them with kqbench report --csv FILE %s", o.csv, csvErr, o.out, o.out)
	}
	fmt.Fprintf(w, "\nresults: %s (every sample), %s\n", o.out, o.csv)
	return nil
}

// seq is 0, 1, ..., n-1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// typedList is splitList's items as values of a string type.
func typedList[T ~string](v []string) []T {
	var out []T
	for _, s := range matrix.SplitList(v) {
		out = append(out, T(s))
	}
	return out
}

// availableTransports returns the transports that run on this machine, and
// the others with the reason.
func availableTransports() (here, notHere []string) {
	for _, n := range transport.Names() {
		t, _ := transport.Get(n)
		if err := t.Available(); err != nil {
			notHere = append(notHere, n+": "+err.Error())
			continue
		}
		here = append(here, n)
	}
	return here, notHere
}

// parseSizes is matrix.ParseSizes with the flag named in its error.
func parseSizes(v []string) ([]int, error) {
	out, err := matrix.ParseSizes(v)
	if err != nil {
		return nil, fmt.Errorf("--sizes: %w", err)
	}
	return out, nil
}

// runMatrixInVM runs this same command (without --vm) in the guest, with the
// results directory shared so the files come back.
//
// The guest's time limit follows the run's plan (matrix.Spec.Plan: every
// cell's samples up to --max-repeat, with room for retakes, plus the boot)
// unless --timeout is given; the results file records how the guest ran
// (its accelerator, vCPUs and the host's steal over the run).
func runMatrixInVM(cmd *cobra.Command, vmf *vmFlags, spec matrix.Spec, out, captureDir string) error {
	args, err := guestArgs(cmd, vmf, out)
	if err != nil {
		return err
	}
	if captureDir != "" {
		// The guest sees this host's files read-only: the captures'
		// directory must be shared too, or they stay in the guest.
		if err := os.MkdirAll(captureDir, 0o755); err != nil {
			return fmt.Errorf("matrix: --capture: %w", err)
		}
		dir, err := filepath.Abs(captureDir)
		if err != nil {
			return fmt.Errorf("matrix: --capture: %w", err)
		}
		vmf.cfg.Shares = append(vmf.cfg.Shares, dir)
	}
	vmf.load = append(vmf.load, "tls", "veth", "sch_netem", "udp_tunnel", "ip6_udp_tunnel", "aesni_intel?", "tcp_bbr?")
	if !cmd.Flags().Changed("timeout") {
		vmf.cfg.Timeout = spec.Plan() + vm.BootMargin
		fmt.Fprintf(cmd.ErrOrStderr(), "matrix: the guest has %v (the plan of %d cells, up to %d samples each, and the boot; --timeout to change it)\n",
			vmf.cfg.Timeout.Round(time.Second), len(spec.Cells()), spec.MaxSamples())
	}
	start, h0 := time.Now(), host.SnapshotCPU()
	res, runErr := vmf.runResult(cmd, args)
	h1 := host.SnapshotCPU()
	if res == nil {
		return runErr
	}
	return errors.Join(runErr, recordGuest(out, res, vmf.cfg.CPUs, time.Since(start), h0, h1))
}

// recordGuest adds how the guest ran to the results file it wrote.
func recordGuest(out string, res *vm.Result, cpus int, took time.Duration, h0, h1 host.CPUSnapshot) error {
	doc, err := results.Load(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil // the guest wrote no results
	}
	if err != nil {
		return fmt.Errorf("matrix: record the guest's run: %w", err)
	}
	g := &results.GuestRun{Accel: res.Accel, CPUs: cpus, Seconds: took.Seconds()}
	if c, err := host.CPUBetween(h0, h1); err != nil {
		g.CPUUnavailable = err.Error()
	} else {
		g.HostStealCores, g.HostBusyCores = c.StealCores, c.BusyCores
	}
	doc.Env.Guest = g
	if err := doc.Save(out); err != nil {
		return fmt.Errorf("matrix: record the guest's run: %w", err)
	}
	return nil
}

// profileDir is where --profile puts a run's folded stacks: next to the
// results file, in a directory named after it (results/matrix-T.json:
// results/matrix-T/profiles; a file not ending in .json: FILE.d/profiles).
func profileDir(out string) string {
	base := strings.TrimSuffix(out, ".json")
	if base == out {
		base += ".d"
	}
	return filepath.Join(base, "profiles")
}
