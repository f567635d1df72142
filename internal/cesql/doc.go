// Package cesql parses and evaluates CloudEvents SQL (CESQL) expressions, the
// language of the `cesql` Trigger filter dialect.
//
// It wraps github.com/cloudevents/sdk-go/sql/v2 so that the rest of knc never
// sees that library's failure modes: its parser panics on some invalid input,
// prints to stderr and silently drops characters it cannot tokenize, which
// Parse turns into a *ParseError with the position of the first syntax error;
// and its expressions may yield a non-Boolean value, which Evaluate reports
// as an error because a filter must yield a Boolean.
//
// Both the compiler's validator (to reject a bad expression before it is
// merged) and the runtime's router (to evaluate it per event) use this
// package, so it must stay a leaf: it imports only the standard library, the
// CloudEvents SDK and the ANTLR runtime the SDK's parser is generated for
// (to report syntax errors with their position), never another knc package,
// cuelang.org/go or sigs.k8s.io/kustomize.
package cesql
