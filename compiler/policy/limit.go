package policy

import "github.com/knc-dev/knc/internal/cuelimit"

// Limits bound an evaluation of the policies: compiling the files, and
// then checking all objects, each under its own budget.
type Limits = cuelimit.Limits

// DefaultLimits leave room for 100,000 objects on a laptop.
var DefaultLimits = cuelimit.Default

// guard runs work under limits; doing says what the work is busy with.
func guard(limits Limits, doing func() string, work func()) error {
	return limits.Guard(cuelimit.Task{Name: "policy evaluation", Subject: "the policy", Doing: doing}, work)
}
