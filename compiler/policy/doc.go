// Package policy checks objects against a team's own rules, written in
// CUE: .knc/policies/*.cue beside knc.yaml, and shared directories given
// to knc validate --policies. The shape of a policy file is
// schema/policy/policy.cue.
//
// Each file is compiled on its own, so a file's definitions serve its own
// policies; a cue.Context is not safe for concurrent use, so every worker
// compiles the files once and then checks its share of the objects.
// Evaluation runs under a time and memory budget: CUE cannot be
// interrupted, so a policy that runs away is reported as an error and the
// caller is expected to exit, which stops it.
package policy
