//go:build linux

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"kquic.dev/tlsagent"
)

func newAgentCmd() *cobra.Command {
	var (
		config      string
		maxInFlight int
		timeout     time.Duration
		debug       bool
	)
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Serve the kernel's TLS handshake requests (net/handshake), in place of tlshd",
		Long: `Serve the handshake requests of kernel TLS consumers over the "handshake"
generic netlink family, as tlshd does: QUIC sockets (SMB or NFS over QUIC, the
QUIC module's sample consumer) with crypto/tls's QUIC API, TCP sockets (NFS
with xprtsec=tls) with crypto/tls and kernel TLS. Client and server roles,
x509 certificates from --config (tlshd.conf(5) syntax: [authenticate.client]
and [authenticate.server] x509.truststore, x509.certificate, x509.private_key;
[authenticate] keyrings) or from the key serials the consumer passes. PSK
requests fail with EOPNOTSUPP (crypto/tls has no external PSK).

Run one agent per host (stop tlshd first: the kernel hands each request to one
listener). It needs CAP_NET_ADMIN. SIGTERM stops it once the handshakes in
flight are answered.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := tlsagent.LoadConfig(config)
			if errors.Is(err, fs.ErrNotExist) && !cmd.Flags().Changed("config") {
				cfg, err = &tlsagent.Config{}, nil
			}
			if err != nil {
				return fmt.Errorf("agent: %w", err)
			}
			level := slog.LevelInfo
			if debug || cfg.LogLevel > 0 {
				level = slog.LevelDebug
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
			a, err := tlsagent.Listen(cfg, log)
			if err != nil {
				return fmt.Errorf("agent: %w", err)
			}
			a.MaxInFlight, a.DefaultTimeout = maxInFlight, timeout
			log.Info("serving handshake requests", "config", config, "max_in_flight", maxInFlight)
			return a.Serve(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&config, "config", tlsagent.DefaultConfigPath, "tlshd-style configuration file (absent at the default path: system trust store, no certificates)")
	f.IntVar(&maxInFlight, "max-in-flight", 16, "handshakes run at once; further requests wait in the kernel")
	f.DurationVar(&timeout, "timeout", 30*time.Second, "handshake timeout for requests that set none")
	f.BoolVar(&debug, "debug", false, "log at debug level")
	return cmd
}
