package kustomize

import (
	"math/rand/v2"
	"strings"
	"testing"

	fluxkustomize "github.com/fluxcd/pkg/kustomize"
)

// localPathCases are entries of the kinds kustomizations hold, and the
// edges of the rule: a prefix alone, case, file:// and non-ASCII runes
// whose lower case is ASCII.
var localPathCases = []string{
	"", ".", "..", "base", "../base", "./overlays/prod", "deployment.yaml",
	"/abs/base", "file:///abs/base", "FILE:///abs", "file://rel/base", "file://",
	"git::https://example.com/repo.git//base?ref=v1", "GIT::x", "git::",
	"gh:org/repo", "gh:", "ssh://git@example.com/repo", "https://example.com/base.yaml",
	"HTTP://EXAMPLE.COM", "http://", "git@github.com:org/repo", "github.com:org/repo",
	"github.com/org/repo//base", "github.com/", "GitHub.com/org/repo", "gitlab.com/org/repo",
	"GİT::x", "gİt::x", "\u212Austomize", "github.co", "gh", "https:/x", "ssh:/x",
	"base?ref=main", "C:\\base", "\\\\server\\share",
}

// TestIsLocalRelativePathMatchesFlux compares knc's rule with Flux's on
// the cases above and on entries assembled at random from the prefixes,
// their pieces in other cases, separators and runes that change length
// when lower-cased.
func TestIsLocalRelativePathMatchesFlux(t *testing.T) {
	check := func(entry string) {
		t.Helper()
		if got, want := isLocalRelativePath(entry), fluxkustomize.IsLocalRelativePath(entry); got != want {
			t.Errorf("isLocalRelativePath(%q) = %v, Flux's = %v", entry, got, want)
		}
	}
	for _, c := range localPathCases {
		check(c)
	}
	pieces := []string{"/", "./", "..", "file://", "x", "base", ":", "//", "?ref=v1", "İ", "\u212A", "é", "\xff"}
	for _, p := range remotePrefixes {
		pieces = append(pieces, p, strings.ToUpper(p), p[:len(p)-1], strings.ToUpper(p[:1])+p[1:])
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(4) + 1 {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		check(b.String())
	}
}

// FuzzIsLocalRelativePath runs the same comparison on what the fuzzer
// makes: go test -fuzz FuzzIsLocalRelativePath ./compiler/kustomize.
func FuzzIsLocalRelativePath(f *testing.F) {
	for _, c := range localPathCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		if got, want := isLocalRelativePath(entry), fluxkustomize.IsLocalRelativePath(entry); got != want {
			t.Errorf("isLocalRelativePath(%q) = %v, Flux's = %v", entry, got, want)
		}
	})
}
