package conformance

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"time"

	"kquic.dev/internal/quicpeer"
	"kquic.dev/internal/quicwire"
)

// Options configure a run.
type Options struct {
	Target Target
	// Roles to test the target in (default both).
	Roles []Role
	// Rules to run (default all); Match keeps those whose name matches one
	// of its path.Match patterns.
	Rules []Rule
	Match []string
	// Wait is how long to wait for an answer after a violation (default
	// 2s): a target that says nothing costs that much per rule.
	Wait time.Duration
	// HandshakeTimeout bounds each handshake (default 10s).
	HandshakeTimeout time.Duration
	// Progress, if set, gets a line per rule.
	Progress io.Writer
}

// Verdicts.
const (
	Agree   = "agree"   // closed with the code the RFC requires or allows
	Differs = "differs" // closed with another code
	Silent  = "silent"  // no CONNECTION_CLOSE within the wait
	NA      = "n/a"     // the rule does not apply to the target
	Failed  = "error"   // the harness could not run the rule
)

// Result is one rule in one role.
type Result struct {
	Rule    string   `json:"rule"`
	Section string   `json:"section"`
	Level   Level    `json:"level"`
	Text    string   `json:"text"`
	Role    Role     `json:"role"`
	Want    []string `json:"want"`
	Answer  Answer   `json:"answer"`
	Verdict string   `json:"verdict"`
	// Millis is how long the answer took after the violation was sent.
	Millis int64 `json:"millis,omitempty"`
}

// Schema names the results file's format.
const Schema = "kqbench.conformance/v1"

// Report is a run's results.
type Report struct {
	Schema  string    `json:"schema"`
	Target  string    `json:"target"`
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
	// Module is the kernel QUIC module's identity where the target is
	// kernel QUIC (its code hash and source commit), set by the caller.
	Module  string   `json:"module,omitempty"`
	Results []Result `json:"results"`
}

// Count is how many results have the verdict.
func (r *Report) Count(verdict string) int {
	n := 0
	for _, x := range r.Results {
		if x.Verdict == verdict {
			n++
		}
	}
	return n
}

// Run runs every selected rule in every selected role against the target,
// one connection per rule.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Target == nil {
		return nil, errors.New("conformance: no target")
	}
	if o.Wait == 0 {
		o.Wait = 2 * time.Second
	}
	if o.HandshakeTimeout == 0 {
		o.HandshakeTimeout = 10 * time.Second
	}
	roles := o.Roles
	if len(roles) == 0 {
		roles = []Role{Server, Client}
	}
	rules, err := selectRules(o.Rules, o.Match)
	if err != nil {
		return nil, err
	}
	stls, ctls, err := tlsConfigs()
	if err != nil {
		return nil, fmt.Errorf("conformance: certificate: %w", err)
	}
	rep := &Report{Schema: Schema, Target: o.Target.Name(), Started: time.Now()}
	for _, role := range roles {
		r := &runner{o: o, stls: stls, ctls: ctls, role: role}
		if role == Server {
			sctx, cancel := context.WithCancel(ctx)
			defer cancel()
			if r.addr, err = o.Target.Serve(sctx, stls); err != nil {
				return nil, fmt.Errorf("conformance: start a %s server: %w", o.Target.Name(), err)
			}
		}
		for i := range rules {
			if !rules[i].AppliesTo(role) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			res := r.run(ctx, &rules[i])
			rep.Results = append(rep.Results, res)
			if o.Progress != nil {
				fmt.Fprintf(o.Progress, "%-7s %-6s %-36s %s\n", res.Verdict, role, res.Rule, res.Answer)
			}
		}
	}
	rep.Seconds = time.Since(rep.Started).Seconds()
	return rep, nil
}

func selectRules(rules []Rule, match []string) ([]Rule, error) {
	if rules == nil {
		rules = Rules
	}
	if len(match) == 0 {
		return rules, nil
	}
	var out []Rule
	for _, r := range rules {
		for _, m := range match {
			ok, err := path.Match(m, r.Name)
			if err != nil {
				return nil, fmt.Errorf("conformance: rule pattern %q: %w", m, err)
			}
			if ok {
				out = append(out, r)
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("conformance: no rule matches %q (kqbench conformance --list shows them)", match)
	}
	return out, nil
}

type runner struct {
	o          Options
	stls, ctls *tls.Config
	role       Role
	addr       string // the target server's
}

func (r *runner) run(ctx context.Context, rule *Rule) Result {
	res := Result{Rule: rule.Name, Section: rule.Section, Level: rule.Level, Text: rule.Text, Role: r.role}
	for _, w := range rule.Want {
		res.Want = append(res.Want, w.String())
	}
	side := Side{Target: r.role}
	hctx, cancel := context.WithTimeout(ctx, r.o.HandshakeTimeout)
	defer cancel()
	start := time.Now()
	c, cleanup, err := r.connect(hctx, rule, side)
	defer cleanup()
	if err != nil {
		var pc *quicpeer.PeerClosedError
		if errors.As(err, &pc) {
			res.Answer = closeAnswer(&pc.Close)
			res.Millis = time.Since(start).Milliseconds()
		} else {
			res.Answer.Error = err.Error()
		}
		res.Verdict = verdict(rule, res.Answer)
		return res
	}
	defer func() {
		if c.Closed() == nil {
			c.Close(0) // a clean end, so the target frees the connection now
		} else {
			c.Abort()
		}
	}() // runs before cleanup: the target's client sees the close first
	sent := time.Now()
	if rule.Send != nil {
		if err := rule.Send(&Session{Conn: c, Side: side}); err != nil {
			if errors.Is(err, ErrNotApplicable) {
				res.Verdict = NA
				return res
			}
			res.Answer.Error = err.Error()
			res.Verdict = Failed
			return res
		}
	}
	pkts, err := c.Poll(r.o.Wait, nil)
	if err != nil {
		res.Answer.Error = err.Error()
	}
	if cc := c.Closed(); cc != nil {
		res.Answer = closeAnswer(cc)
		res.Millis = time.Since(sent).Milliseconds()
	} else {
		res.Answer.Other = notable(pkts)
	}
	res.Verdict = verdict(rule, res.Answer)
	return res
}

// connect makes the connection the rule needs, the target in its role;
// cleanup ends the target's client and closes the socket, after the
// connection's own end.
func (r *runner) connect(ctx context.Context, rule *Rule, side Side) (c *quicpeer.Conn, cleanup func(), err error) {
	if r.role == Server {
		cfg := quicpeer.Config{TLS: r.ctls}
		if rule.Config != nil {
			rule.Config(&cfg, side)
		}
		c, err := quicpeer.Dial(ctx, r.addr, cfg)
		return c, func() {}, err
	}
	cfg := quicpeer.Config{TLS: r.stls}
	if rule.Config != nil {
		rule.Config(&cfg, side)
	}
	ln, err := quicpeer.Listen("127.0.0.1:0", cfg)
	if err != nil {
		return nil, func() {}, err
	}
	tctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.o.Target.Connect(tctx, ln.Addr().String(), r.ctls)
	}()
	cleanup = func() {
		cancel()
		<-done
		ln.Close()
	}
	c, err = ln.Accept(ctx)
	return c, cleanup, err
}

func closeAnswer(cc *quicwire.ConnectionClose) Answer {
	return Answer{Closed: true, Code: cc.ErrorCode, Frame: cc.Offending, App: cc.App, Reason: string(cc.Reason)}
}

// notable lists the frames of note among the packets: a target that resets
// a stream instead of closing says something.
func notable(pkts []quicpeer.Packet) []string {
	var out []string
	for _, p := range pkts {
		for _, f := range p.Frames {
			switch f := f.(type) {
			case quicwire.ResetStream:
				out = append(out, fmt.Sprintf("RESET_STREAM(%d, 0x%x)", f.StreamID, f.ErrorCode))
			case quicwire.StopSending:
				out = append(out, fmt.Sprintf("STOP_SENDING(%d, 0x%x)", f.StreamID, f.ErrorCode))
			}
		}
	}
	return out
}

func verdict(rule *Rule, a Answer) string {
	switch {
	case a.Error != "":
		return Failed
	case !a.Closed:
		return Silent
	case !a.App && slices.Contains(rule.Want, quicwire.TransportError(a.Code)):
		return Agree
	}
	return Differs
}
