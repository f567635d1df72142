// Package live reads knc's objects back from a running cluster: the
// status of the Knative objects, as a tree (Broker → Triggers, Channel →
// Subscriptions, sources, Sequences and Parallels), and what applying a
// build would change, found as kubectl diff finds it, with a server-side
// apply dry run.
//
// The cluster is reached through the current context of a kubeconfig,
// loaded with client-go's clientcmd rules (KUBECONFIG, --kubeconfig,
// --context), so that knc sits beside kubectl and flux and talks to the
// same cluster they do.
//
// A diff against the cluster is reported with package diff's semantic
// report: the live objects are one side and the objects the dry run
// returns the other, each checked and compiled as the manifests are, so
// that routes, filters, delivery and knc's own immutability rules read as
// in `knc diff --base`. Nothing here writes to the cluster: every request
// is a read or a dry run.
//
// The package never prints; the command line writes what it returns.
package live
