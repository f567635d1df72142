// Package redact hides the secrets a URI may carry before knc shows it in
// /status, logs, metric labels, /ui, graphs or diffs. One rule holds for
// every place a URI is shown: its userinfo is masked whole (in
// http://TOKEN@host the user name is the credential), as are the value of
// every query parameter and of every path parameter (?token=, ;sig=: a
// credential as often as not) and the fragment. The scheme, host, path
// and parameter names stay, so that the URI still says where events go.
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
	if !strings.ContainsAny(u, "@?;#") {
		return u
	}
	p, err := url.Parse(u)
	if err != nil {
		return Mask
	}
	if p.User != nil {
		p.User = url.User(Mask)
	}
	if p.RawQuery != "" {
		p.RawQuery = maskParams(p.RawQuery, "&")
	}
	if p.Fragment != "" || p.RawFragment != "" {
		p.Fragment, p.RawFragment = Mask, ""
	}
	if escaped := p.EscapedPath(); strings.Contains(escaped, ";") {
		segments := strings.Split(escaped, "/")
		for i, seg := range segments {
			if name, params, ok := strings.Cut(seg, ";"); ok {
				segments[i] = name + ";" + maskParams(params, ";")
			}
		}
		raw := strings.Join(segments, "/")
		path, err := url.PathUnescape(raw)
		if err != nil {
			return Mask
		}
		p.Path, p.RawPath = path, raw
	}
	if p.Opaque != "" && strings.ContainsAny(p.Opaque, "@;") {
		// mailto:TOKEN@host and the like carry no structure to keep.
		p.Opaque = Mask
	}
	return p.String()
}

// maskParams masks the value of each name=value parameter of params,
// which sep separates.
func maskParams(params, sep string) string {
	var b strings.Builder
	for i, part := range strings.Split(params, sep) {
		if i > 0 {
			b.WriteString(sep)
		}
		name, _, hasValue := strings.Cut(part, "=")
		b.WriteString(name)
		if hasValue {
			b.WriteString("=" + Mask)
		}
	}
	return b.String()
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
