//go:build linux

package counters

import (
	"fmt"
	"sort"

	"github.com/cilium/ebpf"
)

// DropSite is one place packets of an end were dropped from, and why.
type DropSite struct {
	Reason string
	// Site is the function that freed the packets (zero when kallsyms
	// could not name the location, see Location).
	Site     Site
	Location uint64
	Count    uint64
}

// dumpDrops reads the drop map, summed over epochs (only the window's,
// epoch 1, when windowed).
func dumpDrops(m *ebpf.Map, windowed bool) (map[dropKey]mapValue, error) {
	out := map[dropKey]mapValue{}
	var k dropKey
	var v mapValue
	it := m.Iterate()
	for it.Next(&k, &v) {
		if windowed && k.Epoch != epochIn {
			continue
		}
		k.Epoch = 0
		sum := out[k]
		out[k] = mapValue{Count: sum.Count + v.Count, Bytes: sum.Bytes + v.Bytes}
	}
	return out, it.Err()
}

// dropSites names the drops' locations; why it could not goes into missing
// as "drops.where".
func (s *Set) dropSites(drops map[dropKey]mapValue, missing map[string]string) map[uint64]Site {
	var addrs []uint64
	seen := map[uint64]bool{}
	for k := range drops {
		if !seen[k.Location] {
			seen[k.Location] = true
			addrs = append(addrs, k.Location)
		}
	}
	sites, err := resolveSites(addrs)
	if err != nil {
		missing["drops.where"] = err.Error()
	}
	return sites
}

func dropReason(o *offsets, r uint32) string {
	if o != nil {
		if name, ok := o.dropReasons[r]; ok {
			return name
		}
	}
	return fmt.Sprintf("reason_%d", r)
}

// fillDrops counts the drops of packets whose device is in the end's
// namespace by reason, and by reason and function.
func (er *EndResult) fillDrops(drops map[dropKey]mapValue, o *offsets, sites map[uint64]Site) {
	er.Drops = map[string]uint64{}
	er.DropsAt = map[string]uint64{}
	for k, v := range drops {
		if k.Inum != er.NetnsInode {
			continue
		}
		reason := dropReason(o, k.Aux)
		er.Drops[reason] += v.Count
		site, ok := sites[k.Location]
		if ok {
			er.DropsAt[reason+"@"+site.Func] += v.Count
		}
		er.DropSites = append(er.DropSites, DropSite{Reason: reason, Site: site, Location: k.Location, Count: v.Count})
	}
	sort.Slice(er.DropSites, func(i, j int) bool {
		a, b := er.DropSites[i], er.DropSites[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Location < b.Location
	})
}
