//go:build linux

package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"

	"kquic.dev/bench/capture"
	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/profile"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/topo"
)

// A runState is one Run in progress: its document, its two ends, the
// progress's counts and the device configuration set last.
type runState struct {
	r              *Runner
	doc            *results.Document
	env            *mode.Env
	mode           mode.Mode // the spec's mode
	client         side.ClientSide
	server         side.ServerSide
	remote         bool
	done, total    int
	devices        *devices // the configuration set last
	devErr         error
	offloads, note string
	peerOffloads   string
}

// devices is a device configuration: the MTU and GSO setting.
type devices struct {
	mtu int
	gso bool
}

// Run runs every cell that is not done yet and returns the document. When
// ctx ends it stops after saving what finished, and returns ctx's error with
// the document.
func (r *Runner) Run(ctx context.Context) (_ *results.Document, rerr error) {
	if err := r.Spec.Validate(); err != nil {
		return nil, fmt.Errorf("matrix: %w", err)
	}
	if r.Log == nil {
		r.Log = io.Discard
	}
	sm, err := mode.For(r.Spec.Mode, matrix.Cell{})
	if err != nil {
		return nil, fmt.Errorf("matrix: %w", err)
	}
	doc, err := r.document()
	if err != nil {
		return nil, err
	}
	st := &runState{r: r, doc: doc, mode: sm}
	cleanup, err := st.ends()
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if r.ProfileDir != "" {
		if r.prof, err = profile.Start(r.ProfileDir, r.ProfileFrequency); err != nil {
			return nil, fmt.Errorf("matrix: %w", err)
		}
		// On every way out: fold the profiles and name them in the results.
		defer func() {
			if err := r.prof.Finish(doc, filepath.Dir(r.Out)); err != nil {
				fmt.Fprintln(r.Log, err)
			}
			rerr = errors.Join(rerr, st.save())
			r.prof = nil
		}()
	}
	cells := r.Spec.Cells()
	// Cells that cannot be measured (the options do not apply to the
	// transport) take no time: they are out of the count and the ETA.
	for _, c := range cells {
		if !st.notApplicable(c) {
			st.total += r.Spec.Repeat
		}
	}
	// A group is the cells measured with one device configuration (MTU
	// and GSO; Spec.Cells puts them next to each other): every transport,
	// size, encryption and the other axes. Their samples run on one
	// schedule (round-robin, rotating), so that a drift of the machine
	// spreads over all the cells instead of reading as a difference
	// between them.
	for gi := 0; gi < len(cells); {
		gj := gi + 1
		for gj < len(cells) && sameDevices(cells[gi], cells[gj]) {
			gj++
		}
		if err := ctx.Err(); err != nil {
			return doc, errors.Join(err, st.save())
		}
		if err := st.group(ctx, cells[gi:gj]); err != nil {
			return doc, err
		}
		gi = gj
	}
	doc.Complete = true
	return doc, st.save()
}

// ends sets up the two ends: the single-host topology, or the peer's
// server in two-host mode; cleanup removes what it set up.
func (st *runState) ends() (cleanup func(), err error) {
	r, doc := st.r, st.doc
	st.client, st.server = r.Client, r.Server
	st.remote = st.client != nil || st.server != nil
	if st.remote && (st.client == nil || st.server == nil) {
		return nil, errors.New("matrix: two-host mode needs both Runner.Client and Runner.Server")
	}
	st.env = &mode.Env{Spec: &r.Spec, Client: st.client, Server: st.server, CaptureDir: r.CaptureDir, Explain: r.Explain, Options: maps.Clone(r.DriverOptions)}
	st.env.Probes = func(c matrix.Cell, i int) ([]mode.Probe, *capture.KeyLog, error) {
		return r.probes(c, i, st.env.Client, st.env.Server)
	}
	if st.remote {
		if why := st.mode.Needs().SingleHost; why != "" {
			return nil, errors.New("matrix: " + why)
		}
		if err := r.singleHostOnly(); err != nil {
			return nil, err
		}
		doc.Env.Topology, doc.Env.NICDriver, doc.Env.Peer, doc.Env.NIC = r.Topology, r.NICDriver, r.Peer, r.NIC
		if r.Peer != nil && r.Peer.BootID != "" && r.Peer.BootID == doc.Env.BootID {
			doc.Env.PeerIsThisMachine = true
			fmt.Fprintln(r.Log, render.SamePeerWarning)
		}
		if e, ok := st.server.(interface{ SetExplain(bool) }); ok && r.Explain {
			e.SetExplain(true)
		}
		return func() {}, nil
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("matrix: needs root to create the network namespaces and veth pair (run as root, or in the guest: kqbench matrix --vm)")
	}
	t, err := topo.New()
	if err != nil {
		return nil, fmt.Errorf("matrix: %w", err)
	}
	if err := r.applyNetem(t); err != nil {
		t.Close()
		return nil, err
	}
	st.client, st.server = t.ClientDevice(), side.Local{T: t, CPU: r.Spec.Affinity.ServerCPU()}
	st.env.Client, st.env.Server, st.env.Topology = st.client, st.server, t
	nic := host.ReadNIC(t.ClientDevice())
	doc.Env.NIC = &nic
	return func() { t.Close() }, nil
}

// progress counts n windows of cell c done.
func (st *runState) progress(c matrix.Cell, n int) {
	st.done += n
	if st.r.Progress != nil {
		st.r.Progress(st.done, st.total, c)
	}
}

// save writes the document, if the run has a file.
func (st *runState) save() error {
	if st.r.Out == "" {
		return nil
	}
	return st.doc.Save(st.r.Out)
}

// group measures the cells of one device configuration.
func (st *runState) group(ctx context.Context, cells []matrix.Cell) error {
	r := st.r
	var members, running []*cellRun
	for _, c := range cells {
		if m := st.member(c); m != nil {
			members = append(members, m)
		}
	}
	for _, m := range members {
		if m.run && st.prepare(ctx, m) {
			running = append(running, m)
		}
	}
	if err := st.schedule(ctx, running); err != nil {
		return errors.Join(err, st.save())
	}
	for _, m := range members {
		if m.run && m.res.Status == "" {
			m.res.Status = results.StatusOK
			m.res.Summarize()
		}
		if !m.scheduled && m.res.Status != results.StatusNA {
			st.progress(m.c, max(r.Spec.Repeat-len(m.res.Samples), 0)) // could not run here
		}
		st.doc.Put(m.res)
		if m.res.Status != results.StatusNA { // listed once under the tables instead
			fmt.Fprintf(r.Log, "%s: %s\n", m.c.Key(), summaryLine(m.mode, &m.res))
		}
	}
	return st.save()
}

// member is the cell's run in this configuration, or nil when the document
// has it done already.
func (st *runState) member(c matrix.Cell) *cellRun {
	r := st.r
	m := &cellRun{c: c, res: results.CellResult{Cell: c, Key: c.Key()}}
	if prev, ok := st.doc.Lookup(c); ok && prev.Status != results.StatusFailed {
		if !r.resumable(prev) {
			if !st.notApplicable(c) {
				st.progress(c, r.Spec.Repeat)
			}
			return nil
		}
		// Interrupted while it was measured: its samples are kept, and the
		// schedule takes the rest.
		m.res.Samples, m.res.Disturbed = prev.Samples, prev.Disturbed
		st.total += max(len(prev.Samples)-r.Spec.Repeat, 0)
		st.progress(c, len(prev.Samples))
	}
	var err error
	if m.mode, err = mode.For(r.Spec.Mode, c); err != nil {
		m.res.Status, m.res.Note = results.StatusUnavailable, err.Error()
		return m
	}
	status, note := m.mode.Check(st.env, c)
	if status == "" {
		m.res.GSONote = note
		m.run = true
	} else {
		m.res.Status, m.res.Note = status, note
	}
	return m
}

// notApplicable reports whether cell c cannot be measured whatever the
// machine has (its mode's Check says n/a): such a cell takes no time.
func (st *runState) notApplicable(c matrix.Cell) bool {
	m, err := mode.For(st.r.Spec.Mode, c)
	if err != nil {
		return false
	}
	status, _ := m.Check(st.env, c)
	return status == results.StatusNA
}

// prepare sets the devices up for m's configuration, once per
// configuration, and reports whether m can be measured.
func (st *runState) prepare(ctx context.Context, m *cellRun) bool {
	c := m.c
	if st.devices == nil || *st.devices != (devices{c.MTU, c.GSO}) {
		st.devices = &devices{c.MTU, c.GSO}
		st.offloads, st.note, st.devErr = st.client.Prepare(c.MTU, c.GSO)
		if st.devErr == nil {
			st.peerOffloads, st.devErr = st.server.Prepare(ctx, c.MTU, c.GSO)
			if st.devErr != nil {
				st.devErr = fmt.Errorf("server: %w", st.devErr)
			}
		}
		if st.devErr == nil {
			fmt.Fprintf(st.r.Log, "devices: %s (%s)\n", st.offloads, st.note)
			if st.remote {
				fmt.Fprintf(st.r.Log, "server's device: %s\n", st.peerOffloads)
			}
		}
	}
	m.res.Offloads = st.offloads + "; " + st.note
	if st.remote {
		m.res.PeerOffloads = st.peerOffloads
	}
	if st.devErr != nil {
		m.res.Status, m.res.Error = results.StatusFailed, st.devErr.Error()
		return false
	}
	return true
}

// schedule takes the samples of the configuration's cells that can run,
// saving the document after each.
func (st *runState) schedule(ctx context.Context, running []*cellRun) error {
	r := st.r
	sch := &schedule{repeat: r.Spec.Repeat, maxSamples: r.Spec.MaxSamples(),
		take: func(ctx context.Context, k int) (results.Sample, error) {
			m := running[k]
			return m.mode.Sample(ctx, st.env, m.c, m.slot.taken)
		},
		progress: func(k, d, more int) {
			st.total += more
			st.progress(running[k].c, d)
		},
		measured: func(k int) error {
			m := running[k]
			if m.res.Status == "" && len(m.res.Samples) > 0 {
				m.res.Status = results.StatusOK // so far
			}
			m.res.Summarize()
			st.doc.Put(m.res)
			return st.save()
		},
	}
	slots := make([]*slot, len(running))
	for k, m := range running {
		m.scheduled = true
		m.slot = slot{res: &m.res, taken: len(m.res.Samples)}
		slots[k] = &m.slot
	}
	if err := sch.run(ctx, slots); err != nil {
		return err
	}
	for k, m := range running {
		sch.finish(k, &m.slot)
	}
	return nil
}
