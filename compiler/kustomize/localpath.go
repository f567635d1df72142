package kustomize

import (
	"path/filepath"
	"strings"
)

// remotePrefixes are the starts, in any case, of a kustomization entry
// that kustomize fetches from elsewhere: go-getter's git forced getter,
// GitHub's short forms, and URLs.
var remotePrefixes = []string{"git::", "gh:", "ssh://", "https://", "http://", "git@", "github.com:", "github.com/"}

// isLocalRelativePath reports whether a kustomization's resources,
// components or bases entry names a path under the kustomization's own
// tree, as Flux's kustomize-controller decides before it builds: neither
// remote nor absolute (with or without file://). It is Flux's rule
// (github.com/fluxcd/pkg/kustomize.IsLocalRelativePath, the reference of
// its differential test) written here, because that package links
// controller-runtime's client and every built-in API group of client-go,
// which cost each start of knc about 12 ms and 16 MB.
func isLocalRelativePath(entry string) bool {
	for _, p := range remotePrefixes {
		// A prefix alone, with nothing after it, is a local name. The
		// entry's first len(p) bytes are compared, lower-cased, so that a
		// rune whose lower case is shorter (İ is i) cannot make a prefix.
		if len(entry) > len(p) && strings.ToLower(entry[:len(p)]) == p {
			return false
		}
	}
	return !filepath.IsAbs(entry) && !filepath.IsAbs(strings.TrimPrefix(strings.ToLower(entry), "file://"))
}
