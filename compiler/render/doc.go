// Package render turns a checked project into the kustomize directory knc
// build writes: the CRDs, the user's objects normalised, and the resources
// each Broker class and Channel kind needs, one directory per namespace.
package render
