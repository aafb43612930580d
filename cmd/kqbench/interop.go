//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kquic.dev/interop"
)

func newInteropCmd() *cobra.Command {
	var (
		clients, servers, cases []string
		out                     string
		scale                   float64
		timeout                 time.Duration
		repeat                  int
		inVM, keep              bool
		vmf                     vmFlags
	)
	cmd := &cobra.Command{
		Use:   "interop",
		Short: "Run the QUIC interop runner's test cases between implementations, kernel QUIC included",
		Long: `Run the quic-interop-runner's test cases (handshake, transfer, retry,
resumption, zerortt, http3, keyupdate, chacha20, v2, the loss, corruption and
rebinding cases, ...) between QUIC implementations, each pair in both roles,
through a relay on loopback that impairs the traffic as a case asks and keeps
every datagram. Each case is judged from the decrypted trace and the files'
contents, and prints as a matrix: rows servers, columns clients.

Implementations: ` + strings.Join(interop.ImplNames(), ", ") + `. kquic needs the QUIC
module: --vm runs the command in the qemu guest with $KQUIC_MODULE. The
results go to --out as JSON; a failed case's trace (pcapng), key log and
output stay beside it.`,
		Example: `  KQUIC_MODULE=/path/quic.ko kqbench interop --vm
  kqbench interop --clients quic-go,ngtcp2 --servers quic-go,ngtcp2 --cases handshake,retry,zerortt`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				out = filepath.Join("results", "interop-"+time.Now().Format("20060102-150405")+".json")
			}
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return fmt.Errorf("interop: --out: %w", err)
			}
			if inVM {
				return runInVM(cmd, &vmf, out, "interop")
			}
			o := interop.Options{Dir: strings.TrimSuffix(out, ".json"), Scale: scale, Timeout: timeout, Progress: cmd.ErrOrStderr(), KeepPassing: keep}
			var err error
			if o.Servers, err = openImpls(servers); err != nil {
				return err
			}
			if o.Clients, err = openImpls(clients); err != nil {
				return err
			}
			for _, n := range splitList(cases) {
				c, err := interop.CaseNamed(n)
				if err != nil {
					return err
				}
				o.Cases = append(o.Cases, c)
			}
			if len(o.Cases) == 0 {
				o.Cases = interop.Cases
			}
			doc := &interop.Document{Schema: interop.Schema, Started: time.Now()}
			for i := 0; i < max(1, repeat); i++ {
				res, err := interop.Run(cmd.Context(), o)
				doc.Results = append(doc.Results, res...)
				if err != nil {
					return err
				}
			}
			doc.Seconds = time.Since(doc.Started).Seconds()
			for _, s := range append(o.Servers, o.Clients...) {
				if s.Name() == "kquic" {
					doc.Module = moduleIdentity()
				}
			}
			if err := doc.Save(out); err != nil {
				return err
			}
			interop.WriteMatrix(cmd.OutOrStdout(), doc.Results)
			fmt.Fprintln(cmd.OutOrStdout(), "results:", out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&clients, "clients", nil, "client implementations (default: every one that can run here)")
	f.StringSliceVar(&servers, "servers", nil, "server implementations (default: every one that can run here)")
	f.StringSliceVar(&cases, "cases", nil, "cases to run (default all)")
	f.StringVar(&out, "out", "", "results file (default results/interop-TIME.json; evidence in the directory of the same name)")
	f.Float64Var(&scale, "scale", 1, "multiply the cases' file sizes (0.1 for a quick run)")
	f.DurationVar(&timeout, "case-timeout", 60*time.Second, "limit for one case")
	f.IntVar(&repeat, "repeat", 1, "run the whole matrix this many times")
	f.BoolVar(&keep, "keep", false, "keep the evidence of passing cases too")
	f.BoolVar(&inVM, "vm", false, "run in the qemu guest (kernel QUIC with $KQUIC_MODULE)")
	vmf.register(cmd)
	return cmd
}

// openImpls opens the named implementations, or every one that can run
// here, saying why the others cannot.
func openImpls(names []string) ([]interop.Impl, error) {
	all := len(names) == 0
	if all {
		names = interop.ImplNames()
	}
	var out []interop.Impl
	for _, n := range splitList(names) {
		i, err := interop.OpenImpl(n)
		if err != nil {
			if all {
				fmt.Fprintf(os.Stderr, "interop: leaving out %s: %v\n", n, err)
				continue
			}
			return nil, err
		}
		out = append(out, i)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("interop: no implementation can run here")
	}
	return out, nil
}
