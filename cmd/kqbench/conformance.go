//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kquic.dev/bench/matrix"
	"kquic.dev/conformance"
	"kquic.dev/kmod"
)

func newConformanceCmd() *cobra.Command {
	var (
		target, out string
		roles       []string
		match       []string
		wait        time.Duration
		list, inVM  bool
		vmf         vmFlags
	)
	cmd := &cobra.Command{
		Use:   "conformance",
		Short: "Send RFC 9000 violations to a QUIC implementation and table its answers against the RFC's",
		Long: `Send a QUIC implementation the protocol violations of RFC 9000 that must
close a connection (frames it may not receive, limits broken, invalid
transport parameters: kqbench conformance --list), one connection each, in
each role, from a hostile peer that completes a real handshake first, and
print what it answered beside what the RFC requires.

--target kquic is kernel QUIC (the module must be loaded: --vm runs the
command in the qemu guest with $KQUIC_MODULE); --target quic-go checks the
harness against quic-go. The results go to --out as JSON.`,
		Example: `  KQUIC_MODULE=/path/quic.ko kqbench conformance --vm
  kqbench conformance --target quic-go --rules 'stream-*,tp-*'`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if list {
				for _, r := range conformance.Rules {
					fmt.Fprintf(cmd.OutOrStdout(), "%-36s §%-11s %-6s %s: %s\n", r.Name, r.Section, r.Level, r.Text, r.WantString())
				}
				return nil
			}
			var rs []conformance.Role
			for _, r := range matrix.SplitList(roles) {
				if r != string(conformance.Server) && r != string(conformance.Client) {
					return fmt.Errorf("conformance: --roles %q: give server, client or both", r)
				}
				rs = append(rs, conformance.Role(r))
			}
			if out == "" {
				out = filepath.Join("results", "conformance-"+target+"-"+time.Now().Format("20060102-150405")+".json")
			}
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return fmt.Errorf("conformance: --out: %w", err)
			}
			if inVM {
				return runInVM(cmd, &vmf, out, "conformance")
			}
			t, err := conformance.Open(target)
			if err != nil {
				if target == "kquic" {
					return fmt.Errorf("conformance: %w (run it in the guest: KQUIC_MODULE=/path/quic.ko kqbench conformance --vm; or --target quic-go)", err)
				}
				return fmt.Errorf("conformance: %w", err)
			}
			rep, err := conformance.Run(cmd.Context(), conformance.Options{Target: t, Roles: rs, Match: matrix.SplitList(match), Wait: wait, Progress: cmd.ErrOrStderr()})
			if err != nil {
				return err
			}
			if t.Name() == "kquic" {
				rep.Module = moduleIdentity()
			}
			// The results are kept first: a table cut short by a broken
			// pipe loses nothing.
			if err := rep.Save(out); err != nil {
				return err
			}
			if err := rep.WriteTable(cmd.OutOrStdout()); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "results:", out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&target, "target", "kquic", "the implementation under test: "+strings.Join(conformance.TargetNames(), ", "))
	f.StringSliceVar(&roles, "roles", nil, "the target's roles: server, client (default both)")
	f.StringSliceVar(&match, "rules", nil, "rules to run, by name or pattern (stream-*; default all)")
	f.DurationVar(&wait, "wait", 2*time.Second, "how long to wait for an answer after each violation")
	f.StringVar(&out, "out", "", "results file (default results/conformance-TARGET-TIME.json)")
	f.BoolVar(&list, "list", false, "list the rules and exit")
	f.BoolVar(&inVM, "vm", false, "run in the qemu guest (kernel QUIC with $KQUIC_MODULE)")
	vmf.register(cmd)
	return cmd
}

// moduleIdentity names the loaded QUIC module: its code hash where
// $KQUIC_MODULE names the file, else its build ID.
func moduleIdentity() string {
	if p := os.Getenv(envModule); p != "" {
		if h, err := kmod.ModuleCodeHash(p); err == nil {
			return "code " + h + " (" + p + ")"
		}
	}
	if q, err := kmod.Loaded("quic"); err == nil {
		return "build-id " + q.BuildID
	}
	return ""
}

// runInVM runs this same command, without --vm, in the guest with the
// results file's directory shared, and kernel QUIC's dependencies loaded.
func runInVM(cmd *cobra.Command, vmf *vmFlags, out, what string) error {
	args, err := guestArgs(cmd, vmf, out)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	vmf.load = append(vmf.load, "udp_tunnel", "ip6_udp_tunnel")
	return vmf.run(cmd, args)
}

// guestArgs is this process's command line for the guest: without --vm,
// with --out (shared with the guest, which sees the rest of the host
// read-only).
func guestArgs(cmd *cobra.Command, vmf *vmFlags, out string) ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{exe}
	for _, a := range os.Args[1:] {
		if a != "--vm" && a != "--vm=true" {
			args = append(args, a)
		}
	}
	if !cmd.Flags().Changed("out") {
		args = append(args, "--out", out)
	}
	dir, err := filepath.Abs(filepath.Dir(out))
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	vmf.cfg.Shares = append(vmf.cfg.Shares, dir)
	return args, nil
}
