// Package flux tests knc's output the way Flux's kustomize-controller
// reconciles it, against a real kube-apiserver and etcd (internal/kubetest):
// a git repository of `knc build` output served over smart HTTP on loopback
// (internal/gittest), cloned and fetched with git at each commit; the
// checkout built with kustomize; applied, pruned and waited on with
// github.com/fluxcd/pkg/ssa, the library kustomize-controller reconciles
// with (staged server-side apply, CRDs and Namespaces first; deletion of
// what the previous revision applied and this one does not; kstatus
// polling until every object is Current); and the Kustomization's Ready
// condition set from the result as kustomize-controller sets it. It applies
// with admin rights, as kustomize-controller does under the cluster-admin
// binding a Flux install gives it.
//
// Flux's controllers themselves are not run; what a user sees in a
// Kustomization's status comes from the libraries this package runs, which
// are the ones kustomize-controller reconciles with.
//
// `knc runtime` runs as a local process with a token of the ServiceAccount
// the output declares. There is no kubelet or controller manager, and the
// test stands in for them: it mounts the routing-table ConfigMap the
// runtime's Deployment names (writing a file and swapping a symlink, as the
// kubelet does) and then reports the Deployment rolled out and its volume
// claim bound, as their controllers would.
package flux
