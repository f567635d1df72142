package kubetest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNamespacePrefix(t *testing.T) {
	tests := []struct {
		name string
		want string
	}{
		{"TestFoo", "t-testfoo-"},
		{"TestFoo/sub_case#01", "t-testfoo-sub-case-01-"},
		{"Test//__x", "t-test-x-"},
		{strings.Repeat("A", 100), "t-" + strings.Repeat("a", 38) + "-"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, namespacePrefix(tt.name)); diff != "" {
			t.Errorf("namespacePrefix(%q) (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestDeclaresModule(t *testing.T) {
	tests := []struct {
		gomod string
		want  bool
	}{
		{"// comment\nmodule github.com/knc-dev/knc\n\ngo 1.26\n", true},
		{"module \"github.com/knc-dev/knc\"\n", true},
		{"module github.com/knc-dev/knc/hack/testbin\n", false},
		{"go 1.26\n", false},
	}
	for _, tt := range tests {
		if got := declaresModule([]byte(tt.gomod), modulePath); got != tt.want {
			t.Errorf("declaresModule(%q) = %v, want %v", tt.gomod, got, tt.want)
		}
	}
}
