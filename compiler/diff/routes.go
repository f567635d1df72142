package diff

import (
	"cmp"
	"slices"
	"strings"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/topology"
)

// compareRoutes lists the routes of each revision and reports those only
// one has. A route is identified by where it starts, the Trigger,
// Subscription, step or branch it passes (or an event source's sink), and
// the objects it delivers to, so a subscriber or sink that moves is one
// route lost and one gained.
func compareRoutes(base, head *topology.Graph) []RouteChange {
	baseRoutes, headRoutes := routeSet(base), routeSet(head)
	var out []RouteChange
	for k, r := range headRoutes {
		if _, ok := baseRoutes[k]; !ok {
			r.Change = Gained
			out = append(out, r)
		}
	}
	for k, r := range baseRoutes {
		if _, ok := headRoutes[k]; !ok {
			r.Change = Lost
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b RouteChange) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Via, b.Via), cmp.Compare(b.Change, a.Change), cmp.Compare(a.Subscriber, b.Subscriber), cmp.Compare(a.Reply, b.Reply))
	})
	return out
}

// routeKey identifies a route by the objects it joins, not by the
// addresses they resolve to: a Broker that changes class keeps its
// routes, though knc resolves them only for the class it runs.
type routeKey struct {
	source, via               string
	subscriber, reply         string
	subscriberPath, replyPath string
}

func routeSet(g *topology.Graph) map[routeKey]RouteChange {
	out := map[routeKey]RouteChange{}
	for _, ns := range g.Namespaces {
		for _, s := range ns.Sources {
			// An event source's route is its sink: a sink that changes
			// sends its events elsewhere.
			for _, e := range s.Edges {
				if e.Role != topology.SinkOf {
					continue
				}
				rc := RouteChange{Source: s.Kind + " " + s.Namespace + "/" + s.Name, Via: "sink", Subscriber: describeEdge(e)}
				out[routeKey{source: s.ID, via: "sink", subscriber: e.To, subscriberPath: e.Path}] = rc
			}
			for _, r := range s.Routes {
				rc := RouteChange{Source: s.Kind + " " + s.Namespace + "/" + s.Name, Via: r.Kind + " " + r.Name}
				k := routeKey{source: s.ID, via: r.ID}
				for _, e := range r.Edges {
					switch e.Role {
					case topology.Subscriber:
						rc.Subscriber = describeEdge(e)
						k.subscriber, k.subscriberPath = e.To, e.Path
					case topology.Reply:
						rc.Reply = describeEdge(e)
						k.reply, k.replyPath = e.To, e.Path
					}
				}
				out[k] = rc
			}
		}
	}
	return out
}

// describeEdge names where an edge delivers: its address when the
// compiler resolved it, else the object it refers to.
func describeEdge(e *topology.Edge) string {
	if e.URI != "" {
		return e.URI
	}
	kind, rest, _ := strings.Cut(e.To, "/")
	s := kind + " " + rest
	if e.Path != "" {
		s += " " + e.Path
	}
	return s
}

// compareRuntime compares what the runtime serves: the ingress point of
// each Broker and Channel knc runs, and which namespaces have a runtime.
func compareRuntime(base, head *routing.Table) []RuntimeChange {
	type ingress struct {
		kind, namespace, name, path, address string
	}
	index := func(t *routing.Table) (map[string]ingress, map[string]bool) {
		m, namespaces := map[string]ingress{}, map[string]bool{}
		if t == nil {
			return m, namespaces
		}
		for _, b := range t.Brokers {
			m[b.Path] = ingress{"Broker", b.Namespace, b.Name, b.Path, b.Address}
			namespaces[b.Namespace] = true
		}
		for _, c := range t.Channels {
			m[c.Path] = ingress{"Channel", c.Namespace, c.Name, c.Path, c.Address}
			namespaces[c.Namespace] = true
		}
		return m, namespaces
	}
	baseIngress, baseNamespaces := index(base)
	headIngress, headNamespaces := index(head)
	var out []RuntimeChange
	for ns := range headNamespaces {
		if !baseNamespaces[ns] {
			out = append(out, RuntimeChange{Change: Added, Kind: "Runtime", Namespace: ns})
		}
	}
	for ns := range baseNamespaces {
		if !headNamespaces[ns] {
			out = append(out, RuntimeChange{Change: Removed, Kind: "Runtime", Namespace: ns})
		}
	}
	for p, h := range headIngress {
		b, ok := baseIngress[p]
		switch {
		case !ok:
			out = append(out, RuntimeChange{Change: Added, Kind: h.kind, Namespace: h.namespace, Name: h.name, Path: p, NewAddress: h.address})
		case b.address != h.address:
			out = append(out, RuntimeChange{Change: Changed, Kind: h.kind, Namespace: h.namespace, Name: h.name, Path: p, OldAddress: b.address, NewAddress: h.address})
		}
	}
	for p, b := range baseIngress {
		if _, ok := headIngress[p]; !ok {
			out = append(out, RuntimeChange{Change: Removed, Kind: b.kind, Namespace: b.namespace, Name: b.name, Path: p, OldAddress: b.address})
		}
	}
	slices.SortFunc(out, func(a, b RuntimeChange) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(runtimeRank(a.Kind), runtimeRank(b.Kind)), cmp.Compare(a.Path, b.Path))
	})
	return out
}

func runtimeRank(kind string) int {
	if kind == "Runtime" {
		return 0
	}
	return 1
}
