// Package policy embeds the CUE definition of knc's policy files.
package policy

import (
	_ "embed"
)

// Source is policy.cue, the definition of a policy file.
//
//go:embed policy.cue
var Source []byte

// FileName is how the definition names itself in messages and in knc
// schema's output.
const FileName = "policy/policy.cue"
