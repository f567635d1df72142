package router

import (
	"cmp"
	"hash/maphash"
	"slices"
	"strings"
)

// index finds the Triggers an event may pass without looking at every one.
//
// Every Trigger is filed in exactly one place. If its condition requires an
// attribute to equal a value (a top-level exact filter, an exact filter inside
// a top-level all, or a legacy attribute with a non-empty value), it is filed
// under that (attribute, value) pair: an event whose attribute has another
// value cannot pass it. Failing that, if it requires a non-empty attribute
// prefix, it is filed in that attribute's prefix tree. Everything else
// (suffix, any, not and cesql at the top, or no filter at all) is residual
// and evaluated for every event. A Trigger the index selects is then
// evaluated in full, so the index only decides which Triggers are worth
// evaluating, never whether they match.
type index struct {
	exact    []exactIndex
	prefix   []prefixIndex
	residual []int32
}

// exactIndex files Triggers by the required value of one attribute.
type exactIndex struct {
	attr    attribute
	byValue valueTable
}

// prefixIndex files Triggers by a required prefix of one attribute.
type prefixIndex struct {
	attr attribute
	root radixNode
}

// anchor is a requirement every event passing a Trigger meets.
type anchor struct {
	attr   attribute
	value  string
	prefix bool
}

// requiredAnchors lists the exact and prefix requirements implied by c: the
// leaves reachable from the root through "all" nodes only.
func requiredAnchors(c *condition, out []anchor) []anchor {
	switch c.kind {
	case condAll:
		for i := range c.children {
			out = requiredAnchors(&c.children[i], out)
		}
	case condExact, condLegacyExact:
		out = append(out, anchor{attr: c.attr, value: c.value})
	case condPrefix:
		if c.value != "" {
			out = append(out, anchor{attr: c.attr, value: c.value, prefix: true})
		}
	}
	return out
}

func buildIndex(conditions []condition) index {
	anchors := make([][]anchor, len(conditions))
	// popularity counts the Triggers requiring each exact pair, so that a
	// Trigger with several is filed under the rarest: the fewer Triggers
	// share a bucket, the fewer are evaluated in vain.
	popularity := map[anchor]int{}
	for i := range conditions {
		anchors[i] = requiredAnchors(&conditions[i], nil)
		seen := map[anchor]bool{}
		for _, a := range anchors[i] {
			if !a.prefix && !seen[a] {
				seen[a] = true
				popularity[a]++
			}
		}
	}

	var ix index
	var exactFiled []map[string][]int32 // parallel to ix.exact
	exactAt := map[string]int{}
	prefixAt := map[string]int{}
	for i, as := range anchors {
		t := int32(i)
		best, ok := chooseAnchor(as, popularity)
		switch {
		case !ok:
			ix.residual = append(ix.residual, t)
		case best.prefix:
			j, found := prefixAt[best.attr.name]
			if !found {
				j = len(ix.prefix)
				prefixAt[best.attr.name] = j
				ix.prefix = append(ix.prefix, prefixIndex{attr: best.attr})
			}
			ix.prefix[j].root.insert(best.value, t)
		default:
			j, found := exactAt[best.attr.name]
			if !found {
				j = len(ix.exact)
				exactAt[best.attr.name] = j
				ix.exact = append(ix.exact, exactIndex{attr: best.attr})
				exactFiled = append(exactFiled, map[string][]int32{})
			}
			exactFiled[j][best.value] = append(exactFiled[j][best.value], t)
		}
	}
	for j := range ix.exact {
		ix.exact[j].byValue = newValueTable(exactFiled[j])
	}
	return ix
}

// chooseAnchor picks the exact requirement shared by the fewest Triggers,
// else the longest prefix requirement. Ties go to context attributes before
// extensions and then to names, to keep the index deterministic.
func chooseAnchor(as []anchor, popularity map[anchor]int) (anchor, bool) {
	if len(as) == 0 {
		return anchor{}, false
	}
	best := slices.MinFunc(as, func(a, b anchor) int {
		if a.prefix != b.prefix {
			if a.prefix {
				return 1
			}
			return -1
		}
		if a.prefix {
			if c := cmp.Compare(len(b.value), len(a.value)); c != 0 {
				return c
			}
		} else if c := cmp.Compare(popularity[a], popularity[b]); c != 0 {
			return c
		}
		return cmp.Or(
			cmp.Compare(attributeRank(a.attr), attributeRank(b.attr)),
			strings.Compare(a.attr.name, b.attr.name),
			strings.Compare(a.value, b.value),
		)
	})
	return best, true
}

// attributeRank orders attributes by how well they usually tell events apart.
func attributeRank(a attribute) int {
	switch a.kind {
	case attrType:
		return 0
	case attrSource:
		return 1
	case attrSubject:
		return 2
	case attrExtension:
		return 4
	}
	return 3
}

// match appends the Triggers that e (seen through v) passes, in no particular
// order.
func (ix *index) match(conditions []condition, v *eventView, dst []int) []int {
	for i := range ix.exact {
		x := &ix.exact[i]
		value, ok := v.get(x.attr)
		if !ok {
			continue
		}
		for _, t := range x.byValue.lookup(value) {
			if conditions[t].passes(v) {
				dst = append(dst, int(t))
			}
		}
	}
	for i := range ix.prefix {
		p := &ix.prefix[i]
		value, ok := v.get(p.attr)
		if !ok {
			continue
		}
		for n := &p.root; n != nil; {
			for _, t := range n.triggers {
				if conditions[t].passes(v) {
					dst = append(dst, int(t))
				}
			}
			n, value = n.step(value)
		}
	}
	for _, t := range ix.residual {
		if conditions[t].passes(v) {
			dst = append(dst, int(t))
		}
	}
	return dst
}

// radixNode is a node of a compressed prefix tree. The key of a node is the
// concatenation of the edges from the root to it; triggers are the Triggers
// whose required prefix is exactly that key.
type radixNode struct {
	edge     string
	triggers []int32
	children []*radixNode // sorted by the first byte of their edge
}

func (n *radixNode) child(b byte) (int, bool) {
	return slices.BinarySearchFunc(n.children, b, func(c *radixNode, b byte) int {
		return cmp.Compare(c.edge[0], b)
	})
}

func (n *radixNode) insert(key string, t int32) {
	for key != "" {
		i, found := n.child(key[0])
		if !found {
			n.children = slices.Insert(n.children, i, &radixNode{edge: key, triggers: []int32{t}})
			return
		}
		c := n.children[i]
		common := commonPrefixLen(c.edge, key)
		if common < len(c.edge) {
			// Split c's edge where key leaves it.
			mid := &radixNode{edge: c.edge[:common], children: []*radixNode{c}}
			c.edge = c.edge[common:]
			n.children[i] = mid
			c = mid
		}
		n, key = c, key[common:]
	}
	n.triggers = append(n.triggers, t)
}

// step follows the edge that value continues with, returning the child and
// the rest of value, or nil when no key in the tree continues value.
func (n *radixNode) step(value string) (*radixNode, string) {
	if value == "" {
		return nil, ""
	}
	i, found := n.child(value[0])
	if !found {
		return nil, ""
	}
	c := n.children[i]
	if !strings.HasPrefix(value, c.edge) {
		return nil, ""
	}
	return c, value[len(c.edge):]
}

func commonPrefixLen(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// valueTable maps attribute values to the Triggers filed under them. It is
// built once and then only read.
//
// A table of a few values is scanned. A larger one is an open-addressing
// table of value hashes that does not keep the values themselves: every
// Trigger it returns is evaluated in full, which compares the value anyway,
// so a hash collision costs one wasted evaluation and never a wrong match.
// Not comparing the value twice, and probing a dense array of 16-byte slots
// rather than a Go map's string keys, keeps the lookup cost of a Broker with
// thousands of Triggers close to that of one with a single Trigger.
type valueTable struct {
	// small holds the values when there are at most smallTable of them.
	small []string
	// smallSpans[i] locates the Triggers of small[i] in triggers.
	smallSpans []span
	// seed, mask and slots form the hashed table.
	seed     maphash.Seed
	mask     uint64
	slots    []hashSlot
	triggers []int32
}

type span struct{ start, end int32 }

// hashSlot is one slot of the hashed table: hash is 0 when the slot is
// empty, else the (non-zero) hash of the values whose Triggers span
// locates. Keeping both in one 16-byte slot makes a probe one memory access.
type hashSlot struct {
	hash uint64
	span span
}

// smallTable is the number of values up to which scanning them is cheaper
// than hashing the looked-up value.
const smallTable = 8

func newValueTable(byValue map[string][]int32) valueTable {
	var vt valueTable
	values := make([]string, 0, len(byValue))
	for v := range byValue {
		values = append(values, v)
	}
	slices.Sort(values)
	if len(values) <= smallTable {
		for _, v := range values {
			start := int32(len(vt.triggers))
			vt.triggers = append(vt.triggers, byValue[v]...)
			vt.small = append(vt.small, v)
			vt.smallSpans = append(vt.smallSpans, span{start, int32(len(vt.triggers))})
		}
		return vt
	}
	// Values whose hashes collide share a slot and a list of Triggers.
	seed := maphash.MakeSeed()
	byHash := map[uint64][]int32{}
	var order []uint64
	for _, v := range values {
		h := maphash.String(seed, v) | 1
		if _, ok := byHash[h]; !ok {
			order = append(order, h)
		}
		byHash[h] = append(byHash[h], byValue[v]...)
	}
	size := 2
	for size < 2*len(order) {
		size *= 2
	}
	vt.seed, vt.mask = seed, uint64(size-1)
	vt.slots = make([]hashSlot, size)
	for _, h := range order {
		i := h & vt.mask
		for vt.slots[i].hash != 0 {
			i = (i + 1) & vt.mask
		}
		start := int32(len(vt.triggers))
		vt.triggers = append(vt.triggers, byHash[h]...)
		vt.slots[i] = hashSlot{hash: h, span: span{start, int32(len(vt.triggers))}}
	}
	return vt
}

// lookup returns the Triggers filed under value (and, in a large table,
// possibly under values whose hash collides with it), or nil.
func (vt *valueTable) lookup(value string) []int32 {
	if vt.slots == nil {
		for i, v := range vt.small {
			if v == value {
				return vt.triggers[vt.smallSpans[i].start:vt.smallSpans[i].end]
			}
		}
		return nil
	}
	h := maphash.String(vt.seed, value) | 1
	for i := h & vt.mask; ; i = (i + 1) & vt.mask {
		switch s := &vt.slots[i]; s.hash {
		case h:
			return vt.triggers[s.span.start:s.span.end]
		case 0:
			return nil
		}
	}
}
