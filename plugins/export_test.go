package plugins

import "github.com/knc-dev/knc/internal/cuelimit"

// SetRenderLimits gives a loaded CUE plugin other limits for its renders,
// so that a test can load it under generous limits on a busy machine and
// still render it under tight ones.
func SetRenderLimits(p Plugin, limits cuelimit.Limits) {
	p.(*cuePlugin).limits = limits
}
