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
	"kquic.dev/bench/mode"
	nativedrv "kquic.dev/bench/mode/native"
	kqprofile "kquic.dev/bench/profile"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
	"kquic.dev/bench/transport"
	"kquic.dev/kmod/vm"
)

func newMatrixCmd() *cobra.Command {
	def := matrix.DefaultSpec()
	var (
		transports, sizes, mtus, gso, crypto, dirs []string
		spec                                       = def
		out, csvOut                                string
		resume, inVM, quiet, explain, profile      bool
		vmPeer                                     bool
		vmPair                                     pairFlags
		captureDir                                 string
		affinity, label, preset, readSize          string
		profileFreq                                int
		drivers                                    []string
		native                                     mode.Tools
		vmf                                        vmFlags
		pf                                         peerFlags
		rf                                         modeFlags
		imf                                        impairFlags
	)
	cmd := &cobra.Command{
		Use:   "matrix",
		Short: "Compare kernel QUIC, kernel TLS, TCP and quic-go across sizes, MTUs, GSO and encryption",
		Long: `Run every combination of the given transports, message sizes, MTUs, GSO on/off,
encryption on/off and directions over a veth pair between two network
namespaces that kqbench creates (and removes), and print goodput tables in the
shape of the kernel QUIC module's README. Every raw sample goes to a JSON
results file, written after each cell; --resume continues an interrupted run.

Without --transports, the transports that can run on this machine are used;
the others are listed as unavailable with the reason. --vm runs the matrix in
the qemu guest, where kernel QUIC (with $KQUIC_MODULE) and kernel TLS exist.

With --peer HOST:PORT the matrix runs between this host and ` + "`kqbench server`" + ` on
the peer instead: both set the MTU and offloads of their --dev per cell (and
put them back at the end), and each sample records both hosts' CPU.

--mode handshake measures connection setup instead: every exchange is a
fresh connection that sends a request of --sizes bytes and reads an answer
as large, for kquic and quic-go both with a full (1-RTT) handshake and
resuming a session with the request as 0-RTT data, TCP + TLS 1.3 with kernel
TLS (ktls) and plain TCP. One table: handshakes per second and percentiles
of the time to the first byte of the answer.

--driver native measures the kernel's figure with C tools instead, on the same
veth pair with the same counters: the module's perf_test for kquic (--perf-test
or $KQUIC_PERF_TEST), iperf3 for tcp, openssl -ktls for ktls where it has it;
--driver go,native sets the columns side by side (kquic | kquic(C)); with
--iperf-quic (or $KQUIC_IPERF) kquic(C) is the module author's iperf3 fork, the
tool of the module's README, at every size.

--preset lxin-readme runs the module README's two tables (QUIC | kTLS, QUIC
without encryption | TCP, 1-64 KiB, MTU 1500 and 9000, GSO on and off) with
both drivers; after the tables come the ratios the README's readers compute
(kquic / ktls, kquic / tcp, GSO off / on), each with its 95% interval and the
README's own ratio beside it.` + vmPeerHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			var pre *matrix.Preset
			if preset != "" {
				p, err := checkPreset(cmd, preset)
				if err != nil {
					return err
				}
				pre = &p
			}
			var notHere []string // transports left out for not running here, with why
			if cmd.Flags().Changed("transports") || pre != nil {
				spec.Transports = splitList(transports)
			} else if !inVM {
				spec.Transports, notHere = availableTransports()
			}
			if cmd.Flags().Changed("repeat") && !cmd.Flags().Changed("max-repeat") {
				spec.MaxRepeat = 0 // --repeat N alone: exactly N samples per cell
			}
			if resume && out == "" {
				return errors.New("matrix: --resume continues the results file named by --out: give --out FILE (the path the interrupted run printed)")
			}
			if spec.Sizes, err = parseSizes(sizes); err != nil {
				return err
			}
			if spec.MTUs, err = parseInts(mtus, "MTU"); err != nil {
				return err
			}
			if spec.GSO, err = matrix.ParseOnOff(splitList(gso)); err != nil {
				return fmt.Errorf("--gso: %w", err)
			}
			if spec.Crypto, err = matrix.ParseOnOff(splitList(crypto)); err != nil {
				return fmt.Errorf("--crypto: %w", err)
			}
			spec.Directions = typedList[matrix.Direction](dirs)
			if strings.Trim(label, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
				return fmt.Errorf("matrix: --label %q: use letters, digits, '.', '_' and '-' (it becomes part of the file name)", label)
			}
			if spec.Affinity, err = matrix.ParseAffinity(affinity); err != nil {
				return fmt.Errorf("matrix: --%w", err)
			}
			if err := imf.apply(&spec); err != nil {
				return err
			}
			if err := rf.apply(cmd, &spec); err != nil {
				return err
			}
			if err := applyMode(cmd, &spec); err != nil {
				return err
			}
			if spec.Drivers = typedList[matrix.Driver](drivers); len(spec.Drivers) == 1 && spec.Drivers[0] == matrix.DriverGo {
				spec.Drivers = nil // the default: recorded as before
			}
			if pre != nil {
				pre.Apply(&spec)
			}
			if spec.ReadSize, err = parseReadSize(readSize, spec.Drivers); err != nil {
				return fmt.Errorf("matrix: %w", err)
			}
			if err := spec.Validate(); err != nil {
				return fmt.Errorf("matrix: %w", err)
			}
			if out == "" {
				name := "matrix-"
				if label != "" {
					name += label + "-"
				}
				out = filepath.Join("results", name+time.Now().Format("20060102-150405")+".json")
			}
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return fmt.Errorf("matrix: results directory: %w", err)
			}
			if csvOut == "" {
				csvOut = strings.TrimSuffix(out, ".json") + ".csv"
			}
			if vmPeer {
				if inVM || pf.peer != "" {
					return errors.New("matrix: --vm-peer runs both ends in guests of its own: leave out --vm and --peer")
				}
				return runMatrixVMPeer(cmd, &vmf, &vmPair, spec, out, csvOut, explain)
			}
			if inVM {
				if pf.peer != "" {
					return errors.New("matrix: --vm and --peer exclude each other: run kqbench matrix --peer on a host (or in a guest) that reaches the peer")
				}
				return runMatrixInVM(cmd, &vmf, spec, out, captureDir)
			}
			r := &bench.Runner{Spec: spec}
			if pf.peer != "" {
				s, err := pf.connect(cmd.Context(), cmd.ErrOrStderr())
				if err != nil {
					return fmt.Errorf("matrix: %w", err)
				}
				defer s.Close()
				r = s.runner(spec, &pf)
			} else if pf.dev != "" || pf.token != "" || pf.fingerprint != "" {
				return errors.New("matrix: --dev, --token and --fingerprint are for two-host mode: add --peer HOST:PORT")
			}
			r.Out, r.Resume, r.Command, r.Label = out, resume, os.Args, label
			r.Explain, r.CaptureDir = explain, captureDir
			if profile {
				r.ProfileDir, r.ProfileFrequency = profileDir(out), profileFreq
			}
			r.Native.PerfTest, r.Native.Iperf3, r.Native.IperfQUIC = native.PerfTest, native.Iperf3, native.IperfQUIC
			if captureDir != "" {
				if err := os.MkdirAll(captureDir, 0o755); err != nil {
					return fmt.Errorf("matrix: --capture: %w", err)
				}
			}
			stderr := cmd.ErrOrStderr()
			if term.IsTerminal(int(os.Stderr.Fd())) && !quiet {
				bar := progressbar.NewOptions(len(spec.Cells())*spec.Repeat,
					progressbar.OptionSetWriter(stderr), progressbar.OptionSetPredictTime(true),
					progressbar.OptionShowCount(), progressbar.OptionSetDescription("matrix"),
					progressbar.OptionClearOnFinish())
				r.Progress = func(done, total int, c matrix.Cell) {
					bar.ChangeMax(total) // cells that cannot run are not counted
					bar.Describe(c.Transport + " " + strconv.Itoa(c.Size))
					bar.Set(done)
				}
			} else if !quiet {
				r.Log = stderr
			}
			doc, err := r.Run(cmd.Context())
			if doc != nil {
				err = errors.Join(err, printMatrix(cmd.OutOrStdout(), doc, matrixOutput{
					out: out, csv: csvOut, explain: explain, captureDir: captureDir, notHere: notHere, profileDir: r.ProfileDir}))
			}
			if errors.Is(err, context.Canceled) {
				return fmt.Errorf("matrix interrupted: the cells that finished are in %s; continue with --resume --out %s", out, out)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&transports, "transports", nil, "transports to compare: "+strings.Join(transport.Names(), ",")+" (default: those that run here)")
	f.StringSliceVar(&sizes, "sizes", []string{"1K", "4K", "16K", "64K"}, "message sizes (bytes, or with K/M suffix; up to 16M)")
	f.StringSliceVar(&mtus, "mtus", []string{"1500", "9000"}, "MTUs of the veth pair")
	f.StringSliceVar(&gso, "gso", []string{"on", "off"}, "segmentation offload: on, off")
	f.StringSliceVar(&crypto, "crypto", []string{"on", "off"}, "encryption: on, off (kquic's disable_1rtt_encryption; tcp is ktls's off)")
	f.StringSliceVar(&dirs, "direction", []string{"up"}, "up (client to server), down")
	f.IntVar(&spec.Streams, "streams", def.Streams, "parallel streams per cell (in --mode streams: objects sent at once)")
	f.DurationVar(&spec.Time, "time", def.Time, "measured time per sample")
	f.DurationVar(&spec.Warmup, "warmup", def.Warmup, "unmeasured time before each sample")
	f.IntVar(&spec.Repeat, "repeat", def.Repeat, "samples per cell (median and spread are over these); alone, exactly this many")
	f.IntVar(&spec.MaxRepeat, "max-repeat", def.MaxRepeat, "more samples, up to this many, for a cell whose spread is over 25% after --repeat (the median's interval narrows with them); 0: none")
	f.StringVar(&out, "out", "", "results file (default results/matrix-<time>.json); never overwritten")
	f.StringVar(&csvOut, "csv", "", "CSV summary (default: the results file with .csv)")
	f.BoolVar(&resume, "resume", false, "continue the run in --out, keeping its finished cells")
	f.BoolVar(&explain, "explain", false, "count packets, syscalls and drops per cell with eBPF and kernel counters, and print why the transports differ")
	f.StringVar(&captureDir, "capture", "", "write a decryptable pcapng (TLS key log embedded) of every sample into this directory")
	f.StringVar(&label, "label", "", "name this run (before, after...) in its results and in kqbench compare's columns: an A/B across reboots on hardware")
	f.StringVar(&affinity, "affinity", "auto", "pin the client's and the server's streams to two CPUs, as iperf3 -A: auto (the first two this process may use), off, or CLIENT,SERVER (two-host mode: the client's only; --mode h3: the server is a process of its own on SERVER, kqbench runs the client on CLIENT, GOMAXPROCS 1 each)")
	f.BoolVar(&profile, "profile", false, "record call graphs of the whole machine (perf record -a -g) over every sample's window; each cell's folded stacks go to <results>/profiles/ (needs perf: "+kqprofile.PerfPackage+")")
	f.IntVar(&profileFreq, "profile-freq", 0, "with --profile: perf's samples per second and CPU (default 999, 99 under emulation, where perf costs more)")
	f.StringSliceVar(&drivers, "driver", []string{string(matrix.DriverGo)}, "what moves the bytes: go (this process, through the Go bindings), native (the C tools: the module's perf_test for kquic, iperf3 for tcp, openssl -ktls for ktls; columns named kquic(C), ...), or go,native side by side")
	f.StringVar(&native.PerfTest, "perf-test", "", "the module's built tests/perf_test (or a wrapper running it) for --driver native (default $"+nativedrv.PerfTestEnv+")")
	f.StringVar(&native.IperfQUIC, "iperf-quic", "", "the module author's iperf3 fork (lxin/iperf built against libquic) for --driver native: measures kquic at every size with --quic, encrypted or not, as the module's README did (default $"+nativedrv.IperfQUICEnv+"; without it perf_test, up to 4 KiB)")
	f.StringVar(&native.Iperf3, "iperf3", "", "the iperf3 program for --driver native (default: iperf3 on PATH)")
	f.StringVar(&readSize, "read-size", "auto", "bytes a receiver asks for in each read: msg (the message size, as iperf3 -l and the module's README runs read), a size (64K), or auto: msg beside --driver native, else the message size or 64 KiB, whichever is larger")
	f.StringVar(&preset, "preset", "", "a named set of the flags above: lxin-readme (the kernel QUIC module README's tables: kquic, ktls, tcp; 1-64 KiB; MTU 1500, 9000; GSO and encryption on and off; --driver go,native, with --iperf-quic for the kernel's kquic figure at every size; the README's ratios follow the tables)")
	f.BoolVar(&quiet, "quiet", false, "no progress output")
	f.BoolVar(&inVM, "vm", false, "run the matrix in the qemu guest (kernel QUIC with $KQUIC_MODULE, kernel TLS)")
	f.BoolVar(&vmPeer, "vm-peer", false, "run the matrix in two-host mode between two qemu guests joined by a virtio-net link: kqbench server in guest B, the matrix in guest A (--b-module, --b-kernel, --link-* for B and the link)")
	vmf.register(cmd)
	vmPair.registerB(cmd)
	pf.register(cmd)
	rf.register(cmd)
	imf.register(cmd)
	return cmd
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

// typedList is splitList's items as values of a string type.
func typedList[T ~string](v []string) []T {
	var out []T
	for _, s := range splitList(v) {
		out = append(out, T(s))
	}
	return out
}

func splitList(v []string) []string {
	var out []string
	for _, s := range v {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
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

func parseSizes(v []string) ([]int, error) {
	var out []int
	for _, s := range splitList(v) {
		mult := 1
		num := strings.ToUpper(s)
		switch {
		case strings.HasSuffix(num, "K"):
			mult, num = 1<<10, strings.TrimSuffix(num, "K")
		case strings.HasSuffix(num, "M"):
			mult, num = 1<<20, strings.TrimSuffix(num, "M")
		}
		n, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("--sizes: %q is not a size (bytes, or with K or M)", s)
		}
		out = append(out, n*mult)
	}
	return out, nil
}

func parseInts(v []string, what string) ([]int, error) {
	var out []int
	for _, s := range splitList(v) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("%s %q is not a number", what, s)
		}
		out = append(out, n)
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
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	var args []string
	for _, a := range os.Args[1:] {
		if a == "--vm" || a == "--vm=true" {
			continue
		}
		args = append(args, a)
	}
	if !cmd.Flags().Changed("out") {
		args = append(args, "--out", out)
	}
	abs, _ := filepath.Abs(filepath.Dir(out))
	vmf.cfg.Shares = append(vmf.cfg.Shares, abs)
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
	res, runErr := vmf.runResult(cmd, append([]string{exe}, args...))
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
