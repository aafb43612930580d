//go:build linux

package h3

import (
	"context"
	"errors"
	"fmt"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/mode/h3/web"
	"kquic.dev/bench/results"
)

func init() {
	mode.Register(Mode{mode.Common{Mode: Name}})
}

// Mode is the h3 mode.
type Mode struct{ mode.Common }

// Check says whether the cell's transport runs here and takes the cell's
// workload and options.
func (Mode) Check(env *mode.Env, c matrix.Cell) (results.Status, string) {
	if c.Transport == Ngtcp2 {
		return ngtcp2Check(env, c)
	}
	if _, ok := remoteOf(env.Server); env.Remote() && !ok {
		return results.StatusUnavailable, "this server end does not serve the h3 mode's handler"
	}
	r, err := rowOf(c.Transport)
	if err != nil {
		return results.StatusNA, err.Error()
	}
	if err := r.available(); err != nil {
		return results.StatusUnavailable, err.Error()
	}
	switch c.Workload {
	case WorkloadSetup0RTT:
		if r.noEarly != "" {
			return results.StatusNA, "0-RTT: " + r.noEarly
		}
	case WorkloadSetupResumed:
		if r.noResume != "" {
			return results.StatusNA, "resumption: " + r.noResume
		}
	}
	if c.CC != "" && r.quic {
		return results.StatusNA, "--cc sets TCP_CONGESTION of the HTTP/2 rows; quic-go always uses its CUBIC and quicnet has no congestion-control setting"
	}
	note := ""
	if env.Spec.UDPRcvBuf > 0 && r.noRcvBuf != "" {
		note = join(note, "--udp-rcvbuf does not apply: "+r.noRcvBuf)
	}
	return "", note
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// Sample runs the cell's workload once against a server started for it.
func (Mode) Sample(ctx context.Context, env *mode.Env, c matrix.Cell, i int) (results.Sample, error) {
	if c.Transport == Ngtcp2 {
		return ngtcp2Sample(ctx, env, c, i)
	}
	o, probes, err := env.Prepare(c, i)
	if err != nil {
		return results.Sample{}, err
	}
	timeout := 2*time.Minute + env.Spec.Warmup + env.Spec.Time
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cfg := Config{Window: env.Spec.Window, UDPRcvBuf: env.Spec.UDPRcvBuf, CC: c.CC, KeyLog: o.KeyLog}
	srv, cl, err := start(ctx, env, c.Transport, cfg)
	if err != nil {
		return results.Sample{}, fmt.Errorf("%s: %w", c.Transport, err)
	}
	closed := false
	defer func() {
		if !closed {
			srv.stop(ctx)
		}
	}()
	client0 := ReadCounts(env.Client.Do)
	pw := mode.NewWindow(probes)
	defer pw.Stop()
	if err := pw.Open(ctx); err != nil {
		return results.Sample{}, err
	}
	res, werr := Run(ctx, cl, c, env.Spec)
	counted, missing, perr := pw.Close(ctx)
	client := ReadCounts(env.Client.Do).Sub(client0)
	closed = true
	server, serr := srv.stop(ctx)
	if err := errors.Join(werr, serr); err != nil {
		return results.Sample{}, fmt.Errorf("%s %s: %w", c.Transport, WorkloadText(c), err)
	}
	if perr != nil {
		return results.Sample{}, perr
	}
	w, err := webSample(res)
	if err != nil {
		return results.Sample{}, err
	}
	w.ServerRcvbufErrors, w.ClientRcvbufErrors = server.RcvbufErrors, client.RcvbufErrors
	w.ServerRetrans, w.ClientRetrans = server.Retrans, client.Retrans
	w.RmemMax = server.RmemMax
	w.RTTSeconds = env.Spec.Impairment().Delay.Seconds()
	smp := results.Sample{Bytes: res.Bytes, Seconds: res.Seconds, Streams: c.Streams, Finished: time.Now().UTC(),
		Warmup: env.Spec.Warmup.Seconds(), Counters: counted, CountersMissing: missing, Payload: w}
	if res.Seconds > 0 {
		smp.Bps = float64(res.Bytes) * 8 / res.Seconds
	}
	return smp, nil
}

// Run runs cell c's workload over the client once.
func Run(ctx context.Context, cl *web.Client, c matrix.Cell, s *matrix.Spec) (web.Result, error) {
	rounds := 1
	if w := webSpec(s); w != nil {
		rounds = w.Rounds
	}
	switch c.Workload {
	case WorkloadDownload:
		return web.Download(ctx, cl, int64(c.Size))
	case WorkloadUpload:
		return web.Upload(ctx, cl, int64(c.Size))
	case WorkloadObjects:
		return web.Objects(ctx, cl, web.ObjectsOptions{Conns: c.Conns, Streams: c.Streams, Size: int64(c.Size), Warmup: s.Warmup, Duration: s.Time})
	case WorkloadPage:
		return web.Page(ctx, cl, web.PageOptions{Resources: c.Streams, Size: int64(c.Size)})
	case WorkloadSetupFull:
		return web.Setup(ctx, cl, web.SetupFull, rounds)
	case WorkloadSetupResumed:
		return web.Setup(ctx, cl, web.SetupResumed, rounds)
	case WorkloadSetup0RTT:
		return web.Setup(ctx, cl, web.Setup0RTT, rounds)
	}
	return web.Result{}, fmt.Errorf("h3 mode: workload %q: use %v", c.Workload, Workloads())
}

// webSample records a workload's result.
func webSample(r web.Result) (*Sample, error) {
	w := &Sample{Workload: r.Workload, Requests: r.Requests, Bytes: r.Bytes, Seconds: r.Seconds,
		TTFBSeconds: r.TTFBSeconds, Latency: r.Latency, Resumed: r.Resumed, Early: r.Early,
		Errors: r.Errors.Count, ErrorText: r.Errors.String(),
		Client: settingsOf(r.ClientSettings), Server: settingsOf(r.ServerSettings)}
	if r.Histogram != nil {
		enc, err := r.Histogram.Encode()
		if err != nil {
			return nil, err
		}
		w.LatencyHistogram = enc
	}
	return w, nil
}

func settingsOf(s web.Settings) WebSettings {
	return WebSettings{Protocol: s.Protocol, Stack: s.Stack, StreamWindow: s.StreamWindow, ConnWindow: s.ConnWindow,
		Autotuned: s.Autotuned, InitialStreamWindow: s.InitialStreamWindow, MaxStreams: s.MaxStreams,
		UDPRcvBufAsked: s.UDPRcvBufAsked, UDPRcvBufGranted: s.UDPRcvBufGranted, Notes: s.Notes}
}

// Summary is the cell's figure: goodput, requests per second or a time.
func (Mode) Summary(r *results.CellResult) string {
	w := SummaryOf(r)
	if w == nil {
		return "no samples"
	}
	var fig, detail string
	switch w.Figure {
	case "goodput bit/s":
		fig = fmt.Sprintf("%.1f Mbit/s", w.Median/1e6)
	case "requests/s":
		fig = fmt.Sprintf("%.0f requests/s", w.Median)
	default:
		fig = fmt.Sprintf("%.1f ms", w.Median*1e3)
	}
	if w.Latency != nil && w.Latency.Count > 0 {
		detail = fmt.Sprintf(", p50 %v p99 %v", w.Latency.P50.Round(time.Microsecond), w.Latency.P99.Round(time.Microsecond))
	}
	if w.ServerRcvbufErrors+w.ClientRcvbufErrors > 0 {
		detail += fmt.Sprintf(", %d UDP datagrams dropped for a full receive buffer", w.ServerRcvbufErrors+w.ClientRcvbufErrors)
	}
	return mode.SummaryOf(fig, len(r.Samples), w.Spread, w.WideSpread, detail)
}
