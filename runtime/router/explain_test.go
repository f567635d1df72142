package router

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/routing"
)

func TestExplain(t *testing.T) {
	e := newEvent(t, "com.example.order.created", "https://shop.example/orders", "region=eu")
	triggers := []routing.Trigger{
		trigger("none"),
		legacy("legacy", map[string]string{"type": "com.example.order.created", "region": ""}),
		legacy("legacy-missing", map[string]string{"tenant": ""}),
		trigger("exact", routing.Filter{Exact: map[string]string{"type": "com.example.order.deleted"}}),
		trigger("prefix-suffix",
			routing.Filter{Prefix: map[string]string{"type": "com.example."}},
			routing.Filter{Suffix: map[string]string{"source": "/invoices"}},
		),
		trigger("any", routing.Filter{Any: []routing.Filter{
			{Exact: map[string]string{"region": "us"}},
			{Exact: map[string]string{"subject": "x"}},
		}}),
		trigger("not", routing.Filter{Not: &routing.Filter{Exact: map[string]string{"region": "eu"}}}),
		trigger("cesql-error", routing.Filter{CESQL: "tenant = 'acme'"}),
		trigger("nested", routing.Filter{All: []routing.Filter{
			{Any: []routing.Filter{{Prefix: map[string]string{"source": "https://"}}}},
			{Not: &routing.Filter{CESQL: "region = 'us'"}},
		}}),
	}
	m, err := Compile(triggers)
	if err != nil {
		t.Fatal(err)
	}
	want := []Verdict{
		{Index: 0, Matched: true, Reason: "no filter: every event matches"},
		{Index: 1, Matched: true, Reason: `attributes: attribute region: present ("eu"); attributes: attribute type: "com.example.order.created" == "com.example.order.created"`},
		{Index: 2, Matched: false, Reason: "attributes: attribute tenant: missing"},
		{Index: 3, Matched: false, Reason: `filters[0]: exact type: "com.example.order.created" != "com.example.order.deleted"`},
		{Index: 4, Matched: false, Reason: `filters[1]: suffix source: "https://shop.example/orders" does not end with "/invoices"`},
		{Index: 5, Matched: false, Reason: `filters[0]: any: none passed: filters[0].any[0]: exact region: "eu" != "us"; filters[0].any[1]: exact subject: "" != "x"`},
		{Index: 6, Matched: false, Reason: `filters[0].not: exact region: "eu" == "eu"`},
		{Index: 7, Matched: false, Reason: `filters[0]: cesql "tenant = 'acme'": evaluation error: missing attribute error: tenant`},
		{Index: 8, Matched: true, Reason: `filters[0].all[0].any[0]: prefix source: "https://shop.example/orders" starts with "https://"; filters[0].all[1].not: cesql "region = 'us'": false`},
	}
	if diff := cmp.Diff(want, m.Explain(e)); diff != "" {
		t.Errorf("Explain (-want +got):\n%s", diff)
	}
}

func TestCompileErrors(t *testing.T) {
	triggers := []routing.Trigger{
		trigger("good", routing.Filter{CESQL: "type = 'a'"}),
		trigger("t1",
			routing.Filter{Exact: map[string]string{"type": "a"}},
			routing.Filter{Not: &routing.Filter{CESQL: "type = "}},
		),
		trigger("t2", routing.Filter{Any: []routing.Filter{{}}}),
		trigger("t3", routing.Filter{Exact: map[string]string{"type": "a"}, Prefix: map[string]string{"type": "a"}}),
	}
	_, err := Compile(triggers)
	if err == nil {
		t.Fatal("Compile accepted invalid filters")
	}
	got := strings.Split(err.Error(), "\n")
	want := []string{
		`default/t1: filters[1].not.cesql: invalid CESQL expression "type = ": 1:8: syntax error: mismatched input end of expression expecting {'(', 'NOT', '-', 'EXISTS', 'TRUE', 'FALSE', string, integer, identifier}`,
		`default/t2: filters[0].any[0]: exactly one dialect must be set, found 0 ()`,
		`default/t3: filters[0]: exactly one dialect must be set, found 2 (exact, prefix)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compile error lines (-want +got):\n%s", diff)
	}
}

func TestCompileNothing(t *testing.T) {
	m, err := Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEvent(t, "a", "b")
	if got := m.Match(e, nil); len(got) != 0 {
		t.Errorf("Match = %v, want nothing", got)
	}
	if got := m.Explain(e); len(got) != 0 {
		t.Errorf("Explain = %v, want nothing", got)
	}
}
