// Package render turns a checked project into the kustomize directory knc
// build writes: the CRDs (compiler/crd), the repository's objects with the
// Knative kinds normalised, and what each Broker class and Channel kind
// needs (plugins), in one kustomization per namespace, plus the routing
// table. Output.Write replaces a directory atomically; Output.Stream prints
// the same objects as one YAML stream. Everything is deterministic: the
// same manifests give the same bytes, whatever their order.
//
// The YAML is written by a small encoder of its own (yaml.go, typed.go):
// large projects write tens of thousands of objects, and the output must
// read well in review.
//
// This package must not import client-go or the runtime's engine; the
// routing table (internal/routing) is the only runtime package it uses.
package render
