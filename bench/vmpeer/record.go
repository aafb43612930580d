//go:build linux

package vmpeer

import (
	"fmt"

	"kquic.dev/bench/results"
	"kquic.dev/kmod/vm"
)

// Record sets down in doc that its two hosts were the pair's two guests:
// Env.GuestPair (both kernels, boot IDs and modules, the link, the driver
// with its offloads and the interrupts it took over the run) and a
// Topology that says so. cpus is guest A's vCPUs as configured (B's come
// from the same config unless changed; the guests' own environments in
// doc say what each had).
func Record(doc *results.Document, pr *vm.PairResult, cpus, port int) {
	gp := &results.GuestPair{Link: pr.Link.Backend, LinkMTU: pr.Link.MTU, LinkQueues: pr.Link.Queues}
	if pr.A != nil {
		gp.Accel = pr.A.Accel
		gp.Client = pairGuest(pr.A)
	}
	if pr.B != nil {
		gp.Server = pairGuest(pr.B)
	}
	gp.Client.CPUs = doc.Env.CPUs
	if doc.Env.Peer != nil {
		gp.Server.CPUs = doc.Env.Peer.CPUs
	}
	if gp.Client.CPUs == 0 {
		gp.Client.CPUs = cpus
	}
	doc.Env.GuestPair = gp
	dev := func(g results.PairGuest) string {
		if g.Device == "" {
			return "its link device"
		}
		return g.Device + " (" + g.Driver + ")"
	}
	doc.Env.Topology = fmt.Sprintf("%s (qemu, %s link): kqbench matrix --peer in guest A on %s, kqbench server in guest B on %s, port %d; two kernels, one machine's CPUs",
		results.TopologyGuestPair, gp.Link, dev(gp.Client), dev(gp.Server), port)
}

// pairGuest is what a guest reported of itself, as the results record it.
func pairGuest(r *vm.Result) results.PairGuest {
	g := results.PairGuest{Name: r.Name, Ended: ended(r)}
	if in := r.Info; in != nil {
		g.Kernel, g.BootID = in.Kernel, in.BootID
		for _, m := range in.Modules {
			g.Modules = append(g.Modules, results.PairModule{Name: m.Name, Version: m.Version, Srcversion: m.Srcversion, BuildID: m.BuildID})
		}
		if n := in.NIC; n != nil {
			g.Device, g.Driver, g.Address, g.MTU = n.Dev, n.Driver.Driver, n.Addr, n.MTU
			g.Queues, g.MaxQueues, g.Offloads = n.Queues, n.MaxQueues, n.Offloads
		}
	}
	if u := r.NIC; u != nil {
		g.IRQs = []results.PairIRQ{}
		for _, q := range u.IRQs {
			g.IRQs = append(g.IRQs, results.PairIRQ{IRQ: q.IRQ, Name: q.Name, Count: q.Count})
		}
		g.RxPackets, g.TxPackets, g.RxBytes, g.TxBytes = u.RxPackets, u.TxPackets, u.RxBytes, u.TxBytes
	}
	return g
}

// ended says how a guest's command ended.
func ended(r *vm.Result) string {
	switch {
	case r.Stopped && r.ExitCode >= 0:
		return fmt.Sprintf("stopped, exit %d", r.ExitCode)
	case r.Stopped:
		return "stopped"
	case r.ExitCode >= 0:
		return fmt.Sprintf("exit %d", r.ExitCode)
	}
	return "no exit status (the guest failed)"
}
