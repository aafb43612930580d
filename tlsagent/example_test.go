package tlsagent_test

import (
	"context"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"kquic.dev/tlsagent"
)

// Serve kernel handshake requests until SIGTERM, with tlshd's configuration.
func Example() {
	cfg, err := tlsagent.LoadConfig(tlsagent.DefaultConfigPath)
	if err != nil {
		log.Fatal(err)
	}
	a, err := tlsagent.Listen(cfg, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		log.Fatal(err) // wraps tlsagent.ErrNotSupported without CONFIG_NET_HANDSHAKE
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := a.Serve(ctx); err != nil { // returns once the requests in flight are answered
		log.Fatal(err)
	}
}
