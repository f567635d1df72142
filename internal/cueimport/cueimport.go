// Package cueimport says which CUE imports knc refuses. knc evaluates CUE
// manifests, policies and plugins with CUE's standard library alone, and
// never reads a cue.mod directory: its pkg, usr and gen directories, and
// the module cache, may hold symbolic links to, or copies of, files from
// anywhere on the machine, which the project-root rules of the other
// files would not cover.
package cueimport

import "strings"

// Refused says why path may not be imported, or "" when it may. A
// module's package path starts with a domain, so its first element holds
// a dot; the standard library's never does.
func Refused(path string) string {
	first, _, _ := strings.Cut(path, "/")
	if strings.Contains(first, ".") {
		return "knc evaluates CUE with its standard library only and never reads cue.mod (pkg, usr, gen) or CUE modules: copy what is needed into this file, or its package"
	}
	return ""
}
