package cueimport

import "testing"

func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		path    string
		refused bool
	}{
		{"strings", false},
		{"encoding/json", false},
		{"list", false},
		{"tool/exec", false}, // refused by plugins for a reason of their own
		{"example.com/creds", true},
		{"k8s.io/api/core/v1", true},
		{"github.com/org/repo/pkg:name", true},
		{"cue.example/x@v0", true},
	} {
		if got := Refused(tc.path) != ""; got != tc.refused {
			t.Errorf("Refused(%q) refuses: %v, want %v", tc.path, got, tc.refused)
		}
	}
}
