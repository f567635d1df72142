package ui

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/knc-dev/knc/internal/topology"
)

// parseSelection reads the part of the topology a request asks for, with
// the filters of knc graph as query parameters:
//
//	namespace=NS[,NS…]       the Brokers and Channels of these namespaces
//	broker=NAME[,NAME…]      these Brokers, each NAME or NAMESPACE/NAME
//	focus=KIND/NS/NAME       the neighbourhood of one node …
//	depth=N                  … N deliveries either way (default 1)
//
// namespace and broker may also be repeated. An empty value is no filter,
// as the page's form sends every field; depth counts only with a focus.
func parseSelection(q url.Values) (topology.Selection, error) {
	sel := topology.Selection{
		Namespaces: list(q["namespace"]),
		Brokers:    list(q["broker"]),
		Focus:      strings.TrimSpace(q.Get("focus")),
		Depth:      1,
	}
	if sel.Focus == "" {
		return sel, nil
	}
	if d := strings.TrimSpace(q.Get("depth")); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil {
			return sel, &topology.SelectionError{Part: "depth", Value: d, Reason: "give a whole number of steps, 0 or more"}
		}
		sel.Depth = n
	}
	return sel, nil
}

// list splits comma-separated values and drops the empty ones.
func list(values []string) []string {
	var out []string
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

// selectionKey names a selection in the cache of drawings; "" is the whole
// topology.
func selectionKey(sel topology.Selection) string {
	if len(sel.Namespaces) == 0 && len(sel.Brokers) == 0 && sel.Focus == "" {
		return ""
	}
	return strings.Join(sel.Namespaces, ",") + "|" + strings.Join(sel.Brokers, ",") + "|" + sel.Focus + "|" + strconv.Itoa(sel.Depth)
}

// selected returns the view of the part g of the topology: the nodes of
// top drawn in g, short-named as g's drawing names them.
func (top *view) selected(g *topology.Graph) *view {
	in := map[string]bool{}
	for _, ns := range g.Namespaces {
		for _, s := range ns.Sources {
			in[s.ID] = true
			for _, r := range s.Routes {
				in[r.ID] = true
			}
		}
	}
	out := &view{graph: g}
	for _, n := range top.nodes {
		if in[n.ID] {
			out.nodes = append(out.nodes, n)
		}
	}
	out.nameShort()
	return out
}
