// Package kubetest runs a real etcd and kube-apiserver for tests, so that
// claims about what the API server accepts, serves and changes are checked
// against the API server itself rather than a fake client.
//
// The binaries are built from source by hack/testbin/build.sh (`make
// testbin`) and found through KUBEBUILDER_ASSETS, or, when that is unset, in
// hack/testbin/bin of the enclosing knc checkout. A test binary starts one
// control plane from TestMain and shares it between its tests; every test
// gets its own namespace:
//
//	func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		env := kubetest.Current(t)
//		ns := env.Namespace(t)
//		...
//	}
//
// Missing binaries fail the test binary with a message naming `make testbin`,
// because a silently skipped API-server test looks exactly like a passing one.
// The one exception is `go test -short`, where tests that ask for the control
// plane are skipped instead; the control plane is still started in short mode
// when the binaries are present.
//
// The API server runs with RBAC authorization and with service-account token
// signing configured, so a test can act as a ServiceAccount holding exactly
// the permissions it grants (Env.ServiceAccount) and see the 403s a component
// would see in a cluster. No controllers run: namespaces that are deleted stay
// Terminating, garbage collection does not happen, and nothing sets a
// status but the test itself. Env.AggregateClusterRoles stands in for the
// ClusterRole aggregation controller where a test needs aggregated rules.
//
// Applier applies what a GitOps tool would: Kustomize builds a
// kustomization as Flux and Argo CD do, and Applier.Apply server-side
// applies the objects, CRDs and namespaces first.
//
// This package is test support only. Nothing outside _test.go files may
// import it, and it must not import knc's own packages: they test against it,
// and an import back would be a cycle or would couple the harness to the code
// under test. Its dependencies stay limited to client-go, apimachinery,
// the apiextensions types, controller-runtime's envtest and kustomize's
// API.
package kubetest
