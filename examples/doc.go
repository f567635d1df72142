// Package examples holds knc's example projects, one directory each, and
// the tests that build every one of them, check the output with kustomize,
// and apply it to a real API server.
//
// This package has no code besides its tests.
package examples
