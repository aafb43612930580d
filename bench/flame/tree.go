package flame

import (
	"sort"
	"strings"
)

// node is a frame in the merged call tree: a and b count the samples
// through it in the two profiles (b alone for a plain flamegraph).
type node struct {
	name string
	a, b int64
	kids map[string]*node
}

func (n *node) child(name string) *node {
	if n.kids == nil {
		n.kids = map[string]*node{}
	}
	c, ok := n.kids[name]
	if !ok {
		c = &node{name: name}
		n.kids[name] = c
	}
	return c
}

// sorted returns the children by name, the order flamegraph.pl draws them in.
func (n *node) sorted() []*node {
	out := make([]*node, 0, len(n.kids))
	for _, c := range n.kids {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// depth is the number of frame levels below and including n.
func (n *node) depth() int {
	d := 0
	for _, c := range n.kids {
		d = max(d, c.depth())
	}
	return d + 1
}

// buildTree merges the profiles under a root frame "all": a's samples into
// the nodes' a, b's into their b (either may be nil).
func buildTree(a, b Folded) *node {
	root := &node{name: "all"}
	add := func(f Folded, get func(*node) *int64) {
		for stack, n := range f {
			if n <= 0 {
				continue
			}
			cur := root
			*get(cur) += n
			for _, fr := range strings.Split(stack, ";") {
				cur = cur.child(fr)
				*get(cur) += n
			}
		}
	}
	add(a, func(n *node) *int64 { return &n.a })
	add(b, func(n *node) *int64 { return &n.b })
	return root
}
