// Package graph builds the event topology of a project, the graph that
// knc graph and knc diff draw (package topology draws it), from the
// checked model and its routing table: the model names every object a
// route delivers to, the table the addresses knc resolved. TriggerFilter
// writes a Trigger's filter as one expression.
//
// This package must not import cuelang.org/go, sigs.k8s.io/kustomize or the
// runtime's engine; of the runtime it reads only the routing table.
package graph
