// Package conformance holds black-box tests of the knc binary against the
// data-plane behaviour Knative Eventing's own conformance and feature tests
// check, on a Broker and on a Channel served by `knc run`.
//
// Each test names where its assertion comes from: a file of
// github.com/knative/eventing (test/rekt/features/..., test/conformance/
// helpers/..., or the dispatcher under pkg/) or a section of the data-plane
// contract (knative/specs, specs/eventing/data-plane.md). The tests are
// derived from those sources, not copied: the rekt framework needs a
// cluster, while these start `knc run` on manifests in a temporary
// directory and talk to it over HTTP, with real subscribers on loopback.
//
// Where knc deliberately differs from Knative, docs/knative-differences.md
// says so and why; a test here then checks knc's behaviour and names the
// difference.
package conformance
