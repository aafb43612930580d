//go:build linux

// Package browser loads a page in headless Chromium and reports what a
// person's browser would show of it: console errors, uncaught exceptions
// and failed loads, and the value of a script run on the loaded page. It
// speaks the DevTools protocol over --remote-debugging-pipe (no port, no
// websocket), and Chromium resolves no host name, so a page that reaches
// for the network fails to load what it asks for, with an error.
package browser

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Result is what loading a page gave.
type Result struct {
	// Errors are the console's errors, uncaught exceptions and the
	// browser's own error log entries (a resource that failed to load, a
	// blocked request), in order.
	Errors []string
	// Value is the JSON value of the expression given to Load.
	Value json.RawMessage
}

// Load opens url in a fresh headless Chromium (the program at path),
// waits for its load event and a quiet moment after it, then evaluates
// expr on the page (returning a JSON-serialisable value) and closes the
// browser. args are more Chromium switches, after this package's own (a
// later switch replaces an earlier one of the same name: to reach a test
// server, "--proxy-server=direct://").
func Load(ctx context.Context, path, url, expr string, args ...string) (*Result, error) {
	return LoadWith(ctx, path, url, expr, Options{Args: args})
}

// Options are how LoadWith shows the page.
type Options struct {
	// Width and Height are the viewport's size in CSS pixels (zero: the
	// headless browser's default, 800 by 600), as a window of that size
	// on a desktop would show the page.
	Width, Height int
	// Args are more Chromium switches, as Load's args.
	Args []string
}

// LoadWith is Load with the page shown as o says.
func LoadWith(ctx context.Context, path, url, expr string, o Options) (*Result, error) {
	dir, err := os.MkdirTemp("", "kquic-browser-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	toR, toW, err := os.Pipe() // we write commands, Chromium reads them on fd 3
	if err != nil {
		return nil, err
	}
	fromR, fromW, err := os.Pipe() // Chromium writes on fd 4
	if err != nil {
		toR.Close()
		toW.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	argv := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
		"--user-data-dir=" + dir, "--no-first-run", "--no-default-browser-check",
		"--disable-extensions", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-default-apps", "--no-pings", "--disable-domain-reliability",
		"--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
	}
	argv = append(append(argv, o.Args...), "about:blank")
	cmd := exec.CommandContext(ctx, path, argv...)
	cmd.ExtraFiles = []*os.File{toR, fromW}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		toR.Close()
		toW.Close()
		fromR.Close()
		fromW.Close()
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	toR.Close()
	fromW.Close()
	c := &conn{w: toW, pending: map[int]chan message{}, events: make(chan message, 1024)}
	go c.read(fromR)
	res, err := c.load(ctx, url, expr, o)
	closeCtx, closeCancel := context.WithTimeout(ctx, 5*time.Second)
	c.call(closeCtx, "", "Browser.close", nil) // the answer may not come: the browser is gone
	closeCancel()
	toW.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cancel()
		<-done
	}
	fromR.Close()
	if err != nil {
		return nil, fmt.Errorf("%w (chromium's stderr: %s)", err, lastLines(stderr.String(), 5))
	}
	return res, nil
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, " | ")
}

type message struct {
	ID        int                       `json:"id,omitempty"`
	Method    string                    `json:"method,omitempty"`
	Params    json.RawMessage           `json:"params,omitempty"`
	Result    json.RawMessage           `json:"result,omitempty"`
	Error     *struct{ Message string } `json:"error,omitempty"`
	SessionID string                    `json:"sessionId,omitempty"`
}

type conn struct {
	mu      sync.Mutex
	w       *os.File
	next    int
	pending map[int]chan message
	events  chan message
	closed  bool
}

// read splits the pipe into messages (each ends with a NUL byte) and hands
// answers to their callers and events to the events channel.
func (c *conn) read(r *os.File) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		b, err := br.ReadBytes(0)
		if err != nil {
			c.mu.Lock()
			c.closed = true
			for id, ch := range c.pending {
				close(ch)
				delete(c.pending, id)
			}
			c.mu.Unlock()
			close(c.events)
			return
		}
		var m message
		if json.Unmarshal(b[:len(b)-1], &m) != nil {
			continue
		}
		if m.ID != 0 {
			c.mu.Lock()
			ch := c.pending[m.ID]
			delete(c.pending, m.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		select {
		case c.events <- m:
		default: // nobody reads this many events: drop
		}
	}
}

func (c *conn) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errors.New("the browser closed the pipe")
	}
	c.next++
	id := c.next
	ch := make(chan message, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	req := map[string]any{"id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	if session != "" {
		req["sessionId"] = session
	}
	b, _ := json.Marshal(req)
	if _, err := c.w.Write(append(b, 0)); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%s: the browser closed the pipe", method)
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// load opens a tab, watches its console and log, navigates, waits for the
// load event, and evaluates expr.
func (c *conn) load(ctx context.Context, url, expr string, o Options) (*Result, error) {
	s, err := c.open(ctx, o)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	if err := c.navigate(ctx, s, url, res); err != nil {
		return nil, err
	}
	if expr != "" {
		if res.Value, err = c.evaluate(ctx, s, expr); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// open makes a blank tab with o's viewport and returns the session that
// drives it.
func (c *conn) open(ctx context.Context, o Options) (string, error) {
	raw, err := c.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err != nil {
		return "", err
	}
	var target struct{ TargetID string }
	json.Unmarshal(raw, &target)
	raw, err = c.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true})
	if err != nil {
		return "", err
	}
	var att struct{ SessionID string }
	json.Unmarshal(raw, &att)
	s := att.SessionID
	for _, m := range []string{"Runtime.enable", "Log.enable", "Page.enable"} {
		if _, err := c.call(ctx, s, m, nil); err != nil {
			return "", err
		}
	}
	if o.Width > 0 || o.Height > 0 {
		w, h := o.Width, o.Height
		if w <= 0 {
			w = 800
		}
		if h <= 0 {
			h = 600
		}
		if _, err := c.call(ctx, s, "Emulation.setDeviceMetricsOverride", map[string]any{
			"width": w, "height": h, "deviceScaleFactor": 1, "mobile": false,
		}); err != nil {
			return "", err
		}
	}
	return s, nil
}

// navigate loads url in session s and waits for its load event and a quiet
// moment after it, adding the page's errors meanwhile to res.
func (c *conn) navigate(ctx context.Context, s, url string, res *Result) error {
	loaded := false
	var quiet <-chan time.Time
	if _, err := c.call(ctx, s, "Page.navigate", map[string]any{"url": url}); err != nil {
		return err
	}
	timeout := time.After(60 * time.Second)
	for quiet == nil || !loaded {
		select {
		case m, ok := <-c.events:
			if !ok {
				return errors.New("the browser exited before the page loaded")
			}
			if m.SessionID != s {
				continue
			}
			if m.Method == "Page.loadEventFired" {
				loaded = true
				quiet = time.After(500 * time.Millisecond)
			}
			if e := eventError(m); e != "" {
				res.Errors = append(res.Errors, e)
			}
		case <-timeout:
			return fmt.Errorf("%s did not load in 60s", url)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// Events that came in the quiet moment after the load.
	for quietDone := false; !quietDone; {
		select {
		case m, ok := <-c.events:
			if !ok {
				return errors.New("the browser exited")
			}
			if m.SessionID == s {
				if e := eventError(m); e != "" {
					res.Errors = append(res.Errors, e)
				}
			}
		case <-quiet:
			quietDone = true
		}
	}
	return nil
}

// evaluate runs the JavaScript expression expr in session s's page and
// returns its value.
func (c *conn) evaluate(ctx context.Context, s, expr string) (json.RawMessage, error) {
	raw, err := c.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	if err != nil {
		return nil, err
	}
	var ev struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, err
	}
	if ev.ExceptionDetails != nil {
		return nil, fmt.Errorf("the expression failed: %s %s", ev.ExceptionDetails.Text, ev.ExceptionDetails.Exception.Description)
	}
	return ev.Result.Value, nil
}

// eventError is the error an event reports, or "".
func eventError(m message) string {
	switch m.Method {
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		json.Unmarshal(m.Params, &p)
		if p.Type != "error" && p.Type != "assert" {
			return ""
		}
		var parts []string
		for _, a := range p.Args {
			if a.Value != nil {
				parts = append(parts, fmt.Sprint(a.Value))
			} else {
				parts = append(parts, a.Description)
			}
		}
		return "console." + p.Type + ": " + strings.Join(parts, " ")
	case "Runtime.exceptionThrown":
		var p struct {
			ExceptionDetails struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		json.Unmarshal(m.Params, &p)
		return "exception: " + p.ExceptionDetails.Text + " " + p.ExceptionDetails.Exception.Description
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Level  string `json:"level"`
				Source string `json:"source"`
				Text   string `json:"text"`
				URL    string `json:"url"`
			} `json:"entry"`
		}
		json.Unmarshal(m.Params, &p)
		if p.Entry.Level != "error" {
			return ""
		}
		return fmt.Sprintf("%s: %s %s", p.Entry.Source, p.Entry.Text, p.Entry.URL)
	}
	return ""
}
