// Package e2e tests knc's runtime from the outside: it builds the real knc
// binary, starts `knc run` as a subprocess on loopback (through test/rig,
// the harness it shares with the reliability tests), sends CloudEvents
// over HTTP and watches what real HTTP subscribers receive, /status and
// /metrics report, and what survives SIGTERM and SIGKILL.
//
// It imports internal/routing only to write the routing tables it serves; it
// must not import the engine, the compiler, cuelang.org/go or
// sigs.k8s.io/kustomize.
package e2e
