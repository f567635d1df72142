package check

import "testing"

func TestPathSegment(t *testing.T) {
	for name, valid := range map[string]bool{
		"system:aggregate-to-view": true,
		"view":                     true,
		".":                        false,
		"..":                       false,
		"a/b":                      false,
		"a%2F":                     false,
	} {
		if got := len(pathSegment(name)) == 0; got != valid {
			t.Errorf("pathSegment(%q) valid = %v, want %v", name, got, valid)
		}
	}
}
