// Package diff shows what a change to the manifests does before it is
// rolled out. It compares a project at two revisions semantically: objects
// added, removed and changed field by field; routes from a Broker or
// Channel to a subscriber gained and lost; filters that now match more or
// fewer events; effective delivery options; the ingress points the runtime
// serves; and changes to fields Knative does not let an update change,
// which are errors. It also compares a fresh build with a committed output
// directory, file by file, as unified diffs.
//
// Reports are written as text (optionally coloured), as Markdown for a
// pull-request comment, or encoded as JSON. The package never prints on
// its own: it writes to the io.Writer it is given.
//
// This package must not import cuelang.org/go, sigs.k8s.io/kustomize or the
// runtime's engine; of the runtime it reads only the routing table.
package diff
