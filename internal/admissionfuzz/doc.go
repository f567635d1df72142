// Package admissionfuzz generates manifests for differential testing
// against Knative's admission: from valid objects of each kind, with every
// field of Knative's types set somewhere, it derives mutants that change one
// or two leaves or subtrees (absent, empty, wrong type, wrong case, boundary
// lengths, invalid characters, YAML 1.1 spellings, numbers written as
// floats, unknown fields, nested nonsense, status). Case i of seed s is the
// same on every run, so a seed and an index reproduce a case.
//
// It also runs the oracle (a command that prints Knative's verdict per
// object), shrinks the cases on which two judges disagree, and tallies the
// verdicts. It knows nothing of knc: the judge on the other side is a
// function the caller gives.
package admissionfuzz
