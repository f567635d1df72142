package diag

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSeverity(t *testing.T) {
	var l List
	l.AddWarning(Pos{File: "a.yaml", Line: 3, Column: 5}, "spec.filter.exact", "an empty exact matches every event")
	if l.HasErrors() {
		t.Fatalf("a list of warnings has errors: %v", l)
	}
	want := "a.yaml:3:5: warning: spec.filter.exact: an empty exact matches every event"
	if got := l[0].String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	strict := l.Strict()
	if !strict.HasErrors() {
		t.Fatalf("Strict() left no error: %v", strict)
	}
	if l[0].Severity != Warning {
		t.Errorf("Strict() changed the list it was called on")
	}
	l.Add(Pos{File: "a.yaml", Line: 1, Column: 1}, "", "broken")
	if !l.HasErrors() {
		t.Errorf("a list with an error has none: %v", l)
	}
}

func TestSortedKeepsBothSeverities(t *testing.T) {
	pos := Pos{File: "a.yaml", Line: 1, Column: 1}
	l := List{
		{Pos: pos, Message: "m", Severity: Warning},
		{Pos: pos, Message: "m"},
		{Pos: pos, Message: "m"},
	}
	got := l.Sorted()
	want := List{{Pos: pos, Message: "m"}, {Pos: pos, Message: "m", Severity: Warning}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sorted() (-want +got):\n%s", diff)
	}
}
