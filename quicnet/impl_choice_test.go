package quicnet_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"kquic.dev/quicnet"
)

// TestImplementations: the implementations built in, by build tags and
// system.
func TestImplementations(t *testing.T) {
	got := quicnet.Implementations()
	t.Logf("built in: %v; Auto chooses %s", got, quicnet.Implementation())
	if len(got) == 0 {
		t.Fatal("no implementation built in")
	}
	for _, i := range []quicnet.Impl{quicnet.Kernel, quicnet.QuicGo} {
		err := quicnet.Available(i)
		if !slices.Contains(got, i) && (err == nil || !errors.Is(err, errors.ErrUnsupported)) {
			t.Errorf("Available(%s) = %v for an implementation not built in, want an error matching errors.ErrUnsupported", i, err)
		}
	}
	if slices.Contains(got, quicnet.QuicGo) && quicnet.Available(quicnet.QuicGo) != nil {
		t.Errorf("Available(quic-go) = %v, want nil: it runs everywhere", quicnet.Available(quicnet.QuicGo))
	}
}

// TestParseImpl: the names the environment variable takes.
func TestParseImpl(t *testing.T) {
	for in, want := range map[string]quicnet.Impl{"": quicnet.Auto, "auto": quicnet.Auto, "kquic": quicnet.Kernel, "Kernel": quicnet.Kernel,
		"quic-go": quicnet.QuicGo, "quicgo": quicnet.QuicGo} {
		if got, err := quicnet.ParseImpl(in); err != nil || got != want {
			t.Errorf("ParseImpl(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := quicnet.ParseImpl("msquic"); err == nil {
		t.Error("ParseImpl(msquic): no error")
	}
}

// TestImplementationEnv: $QUICNET_IMPLEMENTATION chooses what Auto uses,
// the listener and the connection say which, a Config's own choice wins
// over it, and a value the build cannot use fails Listen and Dial naming
// the variable.
func TestImplementationEnv(t *testing.T) {
	ctls, stls := tlsConfigs(t)
	for _, i := range quicnet.Implementations() {
		t.Run(string(i), func(t *testing.T) {
			requireImplOf(t, i)
			t.Setenv(quicnet.ImplementationEnv, string(i))
			if got := quicnet.Implementation(); got != i {
				t.Errorf("$%s=%s: Implementation() = %s", quicnet.ImplementationEnv, i, got)
			}
			ln := listen(t, stls, nil)
			cli, srv := connect(t, ln, ctls, nil)
			if ln.Implementation() != i || cli.Implementation() != i || srv.Implementation() != i {
				t.Errorf("$%s=%s: listener %s, client %s, server %s", quicnet.ImplementationEnv, i, ln.Implementation(), cli.Implementation(), srv.Implementation())
			}
			echoStreams(srv)
			if got := echo(t, cli, []byte("hello")); string(got) != "hello" {
				t.Errorf("echo: %q", got)
			}
			// The program's own choice stands whatever the variable says.
			for _, other := range quicnet.Implementations() {
				if other == i || quicnet.Available(other) != nil {
					continue
				}
				ln2, err := quicnet.Listen("udp", "127.0.0.1:0", stls, &quicnet.Config{Implementation: other})
				if err != nil {
					t.Fatalf("Config.Implementation %s with $%s=%s: %v", other, quicnet.ImplementationEnv, i, err)
				}
				if ln2.Implementation() != other {
					t.Errorf("Config.Implementation %s with $%s=%s: the listener runs on %s", other, quicnet.ImplementationEnv, i, ln2.Implementation())
				}
				ln2.Close()
			}
		})
	}
	for _, i := range []quicnet.Impl{quicnet.Kernel, quicnet.QuicGo} {
		if slices.Contains(quicnet.Implementations(), i) {
			continue
		}
		t.Run(string(i)+"-not-built-in", func(t *testing.T) {
			t.Setenv(quicnet.ImplementationEnv, string(i))
			_, err := quicnet.Listen("udp", "127.0.0.1:0", stls, nil)
			if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), quicnet.ImplementationEnv) {
				t.Errorf("$%s=%s, not built in: Listen = %v, want an error matching errors.ErrUnsupported naming the variable", quicnet.ImplementationEnv, i, err)
			}
			if _, err := quicnet.Dial(ctxT(t), "127.0.0.1:1", ctls, &quicnet.Config{Implementation: i}); !errors.Is(err, errors.ErrUnsupported) {
				t.Errorf("Config.Implementation %s, not built in: Dial = %v, want an error matching errors.ErrUnsupported", i, err)
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		t.Setenv(quicnet.ImplementationEnv, "msquic")
		if _, err := quicnet.Listen("udp", "127.0.0.1:0", stls, nil); err == nil || !strings.Contains(err.Error(), quicnet.ImplementationEnv) {
			t.Errorf("$%s=msquic: Listen = %v, want an error naming the variable", quicnet.ImplementationEnv, err)
		}
		if _, err := quicnet.Dial(context.Background(), "127.0.0.1:1", ctls, nil); err == nil || !strings.Contains(err.Error(), quicnet.ImplementationEnv) {
			t.Errorf("$%s=msquic: Dial = %v, want an error naming the variable", quicnet.ImplementationEnv, err)
		}
	})
}

// recordHandler keeps the records of slog's default logger.
type recordHandler struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

// TestAutoLoggedOnce: the first Listen or Dial that lets Auto choose logs
// the choice and why; later ones, and those with a Config that chooses,
// log nothing.
func TestAutoLoggedOnce(t *testing.T) {
	requireImpl(t)
	ctls, stls := tlsConfigs(t)
	h := &recordHandler{}
	prev := slog.Default()
	slog.SetDefault(slog.New(h))
	t.Cleanup(func() { slog.SetDefault(prev) })
	quicnet.ForgetChoices()
	want := quicnet.Implementation()
	ln := listen(t, stls, nil)
	connect(t, ln, ctls, nil)
	listen(t, stls, &quicnet.Config{Implementation: want})
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.recs) != 1 {
		t.Fatalf("%d records logged, want 1 (the first choice): %v", len(h.recs), h.recs)
	}
	r := h.recs[0]
	var impl, why string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "implementation":
			impl = a.Value.String()
		case "why":
			why = a.Value.String()
		}
		return true
	})
	t.Logf("logged: %s (%s: %s)", r.Message, impl, why)
	if impl != string(want) || why == "" || r.Level != slog.LevelInfo {
		t.Errorf("logged %q at %v, implementation %q, why %q; want %s at Info with the reason", r.Message, r.Level, impl, why, want)
	}
}
