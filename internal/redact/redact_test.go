package redact

import "testing"

func TestURI(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://example.com/path", "http://example.com/path"},
		{"http://user:s3cret@example.com/hook", "http://xxxxx@example.com/hook"},
		{"http://TOKEN@example.com/hook", "http://xxxxx@example.com/hook"},
		{"http://:s3cret@example.com/hook", "http://xxxxx@example.com/hook"},
		{"https://example.com/hook?token=s3cret&x=1&flag", "https://example.com/hook?token=xxxxx&x=xxxxx&flag"},
		{"https://a:b@example.com/?sig=abc#frag", "https://xxxxx@example.com/?sig=xxxxx#xxxxx"},
		{"https://example.com/hook#access_token=s3cret", "https://example.com/hook#xxxxx"},
		{"https://example.com/hook;token=s3cret", "https://example.com/hook;token=xxxxx"},
		{"https://example.com/a;jsessionid=s3cret;x/b;k=v?q=1", "https://example.com/a;jsessionid=xxxxx;x/b;k=xxxxx?q=xxxxx"},
		{"https://example.com/a%2Fb;t=s%3Bcret/c", "https://example.com/a%2Fb;t=xxxxx/c"},
		{"mailto:TOKEN@example.com", "mailto:xxxxx"},
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
		{`Post "http://u:pw@example.com/x?token=abc": dial tcp: refused`, `Post "http://xxxxx@example.com/x?token=xxxxx": dial tcp: refused`},
		{`Post "http://TOKEN@example.com/x;sig=abc#frag": EOF`, `Post "http://xxxxx@example.com/x;sig=xxxxx#xxxxx": EOF`},
		{"resolved to https://example.com/hook?sig=1.", "resolved to https://example.com/hook?sig=xxxxx."},
	}
	for _, tt := range tests {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
