//go:build linux

package h3

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"kquic.dev/bench/mode"
	"kquic.dev/bench/mode/h3/web"
)

// RemoteServer is a server of the handler on another host.
type RemoteServer struct {
	// Addr is where the client dials; Cert the certificate (DER) it
	// presents; Settings its HTTP-layer settings in force.
	Addr     netip.AddrPort `json:"addr"`
	Cert     []byte         `json:"cert"`
	Settings web.Settings   `json:"settings"`
}

// serverHalf is a sample's server: in the topology's server namespace, or
// on a peer.
type serverHalf struct {
	stop func(ctx context.Context) (Counts, error)
}

// start starts a sample's server and its client: with the ends pinned
// (--affinity), the server as a process of its own (startProcess); else in
// this process, in the topology's server namespace; in two-host mode on
// the peer.
func start(ctx context.Context, env *mode.Env, name string, cfg Config) (*serverHalf, *web.Client, error) {
	if ls, ok := env.Local(); ok {
		do := ls.T.Server.Do
		if a := env.Spec.Affinity; a != nil {
			info, stop, err := startProcess(ctx, do, a, name, cfg)
			if err != nil {
				return nil, nil, err
			}
			cl, err := NewClient(name, info.Addr, env.Client.Do, cfg, info.Cert, info.Settings)
			if err != nil {
				stop(ctx)
				return nil, nil, err
			}
			cl.Settings.Notes = append(cl.Settings.Notes, fmt.Sprintf("kqbench's process on CPU %d, GOMAXPROCS 1 (--affinity; the server's process on CPU %d)", a.Client, a.Server))
			return &serverHalf{stop: stop}, cl, nil
		}
		srv, cl, err := Start(name, Ends{Server: do, Client: env.Client.Do}, cfg)
		if err != nil {
			return nil, nil, err
		}
		base := ReadCounts(do)
		return &serverHalf{stop: func(context.Context) (Counts, error) {
			err := srv.Close()
			return ReadCounts(do).Sub(base), err
		}}, cl, nil
	}
	rs, ok := remoteOf(env.Server)
	if !ok {
		return nil, nil, errors.New("this server end does not serve the h3 mode's handler")
	}
	info, err := rs.ListenWeb(ctx, name, cfg)
	if err != nil {
		return nil, nil, err
	}
	cl, err := NewClient(name, info.Addr, env.Client.Do, cfg, info.Cert, info.Settings)
	if err != nil {
		rs.StopWeb(ctx)
		return nil, nil, err
	}
	return &serverHalf{stop: rs.StopWeb}, cl, nil
}
