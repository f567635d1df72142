package diff

import (
	"testing"

	"github.com/knc-dev/knc/compiler/model"
)

func TestFilterEffect(t *testing.T) {
	str := func(s string) *string { return &s }
	attrs := func(m map[string]string) *model.Trigger {
		return &model.Trigger{Spec: model.TriggerSpec{Filter: &model.TriggerFilter{Attributes: m}}}
	}
	filters := func(fs ...model.SubscriptionsAPIFilter) *model.Trigger {
		return &model.Trigger{Spec: model.TriggerSpec{Filters: fs}}
	}
	none := &model.Trigger{}
	tests := []struct {
		name     string
		old, new *model.Trigger
		want     string
	}{
		{"filter added", none, attrs(map[string]string{"type": "a"}), MatchesLess},
		{"filter removed", filters(model.SubscriptionsAPIFilter{CESQL: str("x = 1")}), none, MatchesMore},
		{"attribute added", attrs(map[string]string{"type": "a"}), attrs(map[string]string{"type": "a", "source": "s"}), MatchesLess},
		{"any value made exact", attrs(map[string]string{"type": ""}), attrs(map[string]string{"type": "a"}), MatchesLess},
		{"exact made any value", attrs(map[string]string{"type": "a"}), attrs(map[string]string{"type": ""}), MatchesMore},
		{"value changed", attrs(map[string]string{"type": "a"}), attrs(map[string]string{"type": "b"}), FilterChanged},
		{"attributes rewritten as filters", attrs(map[string]string{"type": "a"}), filters(model.SubscriptionsAPIFilter{Exact: map[string]string{"type": "a"}}), Equivalent},
		{"all flattened", filters(model.SubscriptionsAPIFilter{All: []model.SubscriptionsAPIFilter{{Exact: map[string]string{"type": "a"}}, {Prefix: map[string]string{"source": "/x"}}}}),
			filters(model.SubscriptionsAPIFilter{Exact: map[string]string{"type": "a"}}, model.SubscriptionsAPIFilter{Prefix: map[string]string{"source": "/x"}}), Equivalent},
		{"longer prefix", filters(model.SubscriptionsAPIFilter{Prefix: map[string]string{"type": "com."}}), filters(model.SubscriptionsAPIFilter{Prefix: map[string]string{"type": "com.example."}}), MatchesLess},
		{"exact to its prefix", attrs(map[string]string{"type": "com.example.a"}), filters(model.SubscriptionsAPIFilter{Prefix: map[string]string{"type": "com.example."}}), MatchesMore},
		{"shorter suffix", filters(model.SubscriptionsAPIFilter{Suffix: map[string]string{"type": ".created"}}), filters(model.SubscriptionsAPIFilter{Suffix: map[string]string{"type": "d"}}), MatchesMore},
		{"cesql changed", filters(model.SubscriptionsAPIFilter{CESQL: str("a = 1")}), filters(model.SubscriptionsAPIFilter{CESQL: str("a = 2")}), FilterChanged},
		{"cesql kept, exact added", filters(model.SubscriptionsAPIFilter{CESQL: str("a = 1")}), filters(model.SubscriptionsAPIFilter{CESQL: str("a = 1")}, model.SubscriptionsAPIFilter{Exact: map[string]string{"type": "t"}}), MatchesLess},
		{"not is opaque", filters(model.SubscriptionsAPIFilter{Not: &model.SubscriptionsAPIFilter{Exact: map[string]string{"type": "a"}}}), filters(model.SubscriptionsAPIFilter{Not: &model.SubscriptionsAPIFilter{Exact: map[string]string{"type": "b"}}}), FilterChanged},
		{"prefix on another attribute", filters(model.SubscriptionsAPIFilter{Prefix: map[string]string{"type": "a"}}), filters(model.SubscriptionsAPIFilter{Prefix: map[string]string{"source": "a"}}), FilterChanged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := filterEffect(conjuncts(tt.old), conjuncts(tt.new)); got != tt.want {
				t.Errorf("filterEffect = %q, want %q", got, tt.want)
			}
		})
	}
}
