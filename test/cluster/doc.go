// Package cluster tests knc's GitOps loop end to end against a real
// kube-apiserver and etcd (internal/kubetest): it builds the real knc
// binary, runs `knc build`, applies the output with the API server's
// server-side apply, as Flux and Argo CD do, runs `knc runtime` as a
// subprocess with a token of the generated ServiceAccount (so with exactly
// the generated RBAC, not as admin), and checks what the runtime writes to
// the /status subresource of each object, that events posted to its
// ingress reach real HTTP subscribers on loopback, and how drift, missing
// Brokers and deleted Addressables are reported.
//
// There is no kubelet, controller manager or DNS in the test cluster, and
// the test stands in for them where it must: it mounts the routing-table
// ConfigMap by writing its content to a file (and swaps a symlink to update
// it, as the kubelet does), it aggregates the ClusterRoles labelled
// duck.knative.dev/addressable as the controller manager would, and its
// subscribers are reached by loopback URLs: a uri subscriber, and a
// test-only Addressable kind (Sink) whose status.address.url the test sets
// to a loopback server, which the runtime resolves by duck typing exactly
// as it would any Addressable in a cluster. Subscribers that are v1
// Services resolve to cluster DNS names, which this machine cannot reach;
// for them the test checks the status, not the delivery.
//
// This package may import the compiler (it checks that the runtime hashes
// live specs as the compiler does), but nothing under runtime may.
package cluster
