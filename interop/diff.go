package interop

import (
	"fmt"
	"io"
	"sort"
)

// Change is a case whose status differs between two runs (two module
// builds): A's and B's results, either nil where that run did not have the
// case.
type Change struct {
	Server, Client, Case string
	A, B                 *Result
}

// Diff returns the cases whose status differs from a to b, by server,
// client and case, in b's order then a's. A case repeated (--repeat)
// compares as its statuses joined.
func Diff(a, b []Result) []Change {
	type key struct{ s, c, k string }
	idx := func(res []Result) (map[key]*Result, map[key]string, []key) {
		first, status := map[key]*Result{}, map[key]string{}
		var order []key
		for i := range res {
			r := &res[i]
			k := key{r.Server, r.Client, r.Case}
			if _, ok := first[k]; !ok {
				first[k] = r
				order = append(order, k)
				status[k] = r.Status
			} else {
				status[k] += "," + r.Status
			}
			// A failure speaks for the case over a pass of another repeat.
			if r.Status != Pass && first[k].Status == Pass {
				first[k] = r
			}
		}
		return first, status, order
	}
	ra, sa, oa := idx(a)
	rb, sb, ob := idx(b)
	var out []Change
	seen := map[key]bool{}
	for _, k := range append(ob, oa...) {
		if seen[k] {
			continue
		}
		seen[k] = true
		if sa[k] != sb[k] {
			out = append(out, Change{Server: k.s, Client: k.c, Case: k.k, A: ra[k], B: rb[k]})
		}
	}
	return out
}

// WriteDiff writes the changes between two runs, A then B, each change with
// both statuses and B's reason (or A's, where B passed), or "no change".
func WriteDiff(w io.Writer, nameA, nameB string, a, b []Result) {
	ch := Diff(a, b)
	if len(ch) == 0 {
		fmt.Fprintf(w, "no change: every case has the same status with A (%s) and B (%s) (%d cases)\n", nameA, nameB, len(b))
		return
	}
	sort.SliceStable(ch, func(i, j int) bool { return ch[i].Server+ch[i].Client < ch[j].Server+ch[j].Client })
	fmt.Fprintf(w, "%d case(s) changed from A (%s) to B (%s):\n", len(ch), nameA, nameB)
	st := func(r *Result) string {
		if r == nil {
			return "not run"
		}
		return r.Status
	}
	for _, c := range ch {
		fmt.Fprintf(w, "  %-20s client %-8s server %-8s %s → %s\n", c.Case, c.Client, c.Server, st(c.A), st(c.B))
		why := c.B
		if why == nil || why.Status == Pass {
			why = c.A
		}
		if why != nil && why.Reason != "" {
			fmt.Fprintf(w, "      %s\n", why.Reason)
		}
	}
}
