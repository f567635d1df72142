// Package resolve turns the Destinations of a routing table into the URLs the
// runtime sends events to.
//
// The compiler resolves every Destination it can from the repository; what
// is left is a Ref it could not follow, such as a Knative Service that lives
// only in the cluster. A Resolver finishes the job: Local, used by `knc run`,
// resolves Refs to the Brokers and Channels of the table itself (at the
// local listener), and reports every other Ref as unresolvable. Cluster mode
// implements Resolver by reading the referent's status.address.url through
// the Kubernetes API (the Addressable duck type).
//
// All resolves every destination of a table at once; its Results feed both
// the engine (which holds back deliveries to unresolved destinations) and
// package status (which reports them in conditions).
//
// This package imports only the standard library and internal/routing. It must
// not import cuelang.org/go, sigs.k8s.io/kustomize or anything under
// github.com/knc-dev/knc/compiler.
package resolve
