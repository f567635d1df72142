// Package redact hides the secrets a URI may carry before knc shows it in
// /status, logs, metric labels, graphs or diffs: the password of its
// userinfo, always, and the value of every query parameter (a ?token= or
// ?sig= is a credential as often as not). The scheme, host, path and
// parameter names stay, so that the URI still says where events go.
//
// It must not import the compiler or the runtime.
package redact

import (
	"net/url"
	"strings"
)

// Mask replaces what is hidden.
const Mask = "xxxxx"

// URI returns u with its secrets masked. A string that does not parse as
// a URI is masked whole when it looks as if it holds userinfo or a query,
// and returned as it is otherwise.
func URI(u string) string {
	if !strings.ContainsAny(u, "@?") {
		return u
	}
	p, err := url.Parse(u)
	if err != nil {
		return Mask
	}
	if p.User != nil {
		if _, ok := p.User.Password(); ok {
			p.User = url.UserPassword(p.User.Username(), Mask)
		}
	}
	if p.RawQuery != "" {
		var b strings.Builder
		for i, part := range strings.Split(p.RawQuery, "&") {
			if i > 0 {
				b.WriteByte('&')
			}
			name, _, hasValue := strings.Cut(part, "=")
			b.WriteString(name)
			if hasValue {
				b.WriteString("=" + Mask)
			}
		}
		p.RawQuery = b.String()
	}
	return p.String()
}

// Text masks the URIs among the space-separated words of a message, such
// as an error of net/http (`Post "http://...": EOF`), where quotes and
// punctuation around a URI stay as they are.
func Text(msg string) string {
	if !strings.Contains(msg, "://") {
		return msg
	}
	words := strings.Split(msg, " ")
	for i, w := range words {
		if !strings.Contains(w, "://") {
			continue
		}
		start := strings.IndexFunc(w, func(r rune) bool { return !strings.ContainsRune(`"'(<[`, r) })
		end := strings.LastIndexFunc(w, func(r rune) bool { return !strings.ContainsRune(`"'):,.>]`, r) }) + 1
		if start < 0 || end <= start {
			continue
		}
		words[i] = w[:start] + URI(w[start:end]) + w[end:]
	}
	return strings.Join(words, " ")
}
