package redact

import "testing"

func TestURI(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://example.com/path", "http://example.com/path"},
		{"http://user:s3cret@example.com/hook", "http://user:xxxxx@example.com/hook"},
		{"http://user@example.com/hook", "http://user@example.com/hook"},
		{"https://example.com/hook?token=s3cret&x=1&flag", "https://example.com/hook?token=xxxxx&x=xxxxx&flag"},
		{"https://a:b@example.com/?sig=abc#frag", "https://a:xxxxx@example.com/?sig=xxxxx#frag"},
		{"/relative/path?token=abc", "/relative/path?token=xxxxx"},
		{"http://a:b@exa mple.com:badport/?q=1", "xxxxx"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := URI(tt.in); got != tt.want {
			t.Errorf("URI(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"no uri here", "no uri here"},
		{`Post "http://u:pw@example.com/x?token=abc": dial tcp: refused`, `Post "http://u:xxxxx@example.com/x?token=xxxxx": dial tcp: refused`},
		{"resolved to https://example.com/hook?sig=1.", "resolved to https://example.com/hook?sig=xxxxx."},
	}
	for _, tt := range tests {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
