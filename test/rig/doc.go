// Package rig is the test harness of knc's black-box tests (test/e2e, and
// the reliability tests test/faults, test/cluster3, test/soak): it builds
// the knc binary, runs `knc run` processes it can reload, terminate, kill
// and restart, runs subscribers on loopback that record every event id
// they acknowledge and can misbehave on purpose, sends load that remembers
// which event ids were answered 202, and reconciles the two into the
// figures every reliability test prints: sent, accepted, delivered,
// duplicates and lost.
//
// It is imported by tests only. Like the runtime, it must not import
// cuelang.org/go, sigs.k8s.io/kustomize or github.com/knc-dev/knc/compiler/...:
// it drives knc from the outside, through routing tables and HTTP.
package rig
