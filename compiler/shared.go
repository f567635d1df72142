package compiler

import (
	"cmp"
	"slices"
	"strings"

	"github.com/knc-dev/knc/compiler/diag"
)

// builtBy is how a diagnostic in a file outside a kustomization's
// directory names the kustomization that built it (see inUnit).
const builtBy = " (as built by kustomization "

// oncePerSharedFile merges the diagnostics that differ only in the
// kustomization that built the object: an error in a base that several
// overlays include is one mistake, printed once, naming every overlay.
func oncePerSharedFile(diags diag.List) diag.List {
	type key struct {
		pos      diag.Pos
		path     string
		message  string
		severity diag.Severity
	}
	builders := map[key][]string{}
	var out diag.List
	for _, d := range diags {
		base, name, ok := cutBuiltBy(d.Message)
		if !ok {
			out = append(out, d)
			continue
		}
		k := key{d.Pos, d.Path, base, d.Severity}
		if _, seen := builders[k]; !seen {
			d.Message = base
			out = append(out, d)
		}
		if !slices.Contains(builders[k], name) {
			builders[k] = append(builders[k], name)
		}
	}
	for i, d := range out {
		names, ok := builders[key{d.Pos, d.Path, d.Message, d.Severity}]
		if !ok {
			continue
		}
		slices.SortFunc(names, cmp.Compare)
		if len(names) == 1 {
			out[i].Message += builtBy + names[0] + ")"
		} else {
			out[i].Message += " (as built by kustomizations " + strings.Join(names, ", ") + ")"
		}
	}
	return out
}

// cutBuiltBy splits a message ending in builtBy's note into the message
// and the kustomization's name.
func cutBuiltBy(msg string) (base, name string, ok bool) {
	i := strings.LastIndex(msg, builtBy)
	if i < 0 || !strings.HasSuffix(msg, ")") {
		return msg, "", false
	}
	return msg[:i], msg[i+len(builtBy) : len(msg)-1], true
}
