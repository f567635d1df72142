// Package kustomize renders a kustomization as Flux's kustomize-controller
// does (github.com/fluxcd/pkg/kustomize: no load restrictions below the
// repository's root, builtin transformers only), and offline: a remote base
// is an error rather than a clone.
//
// Rendered objects become load.Documents whose nodes point back at the
// files they came from: the resource file for what the base says, the
// patch file for what an overlay's patch set, the kustomization file for
// what one of its transformers set. kustomize's origin annotations say
// which resource file an object comes from; the fields are then found in
// that file by their path.
//
// Most kustomizations are rendered by knc's own renderer (fast.go), which
// follows krusty for a subset of kustomize without its cost; krusty
// renders the rest, and stays the reference the differential tests
// compare knc's renderer with.
package kustomize
