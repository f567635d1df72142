package router

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/routing"
)

// knativeCases are Triggers and structured events on which knc once decided
// otherwise than Knative's Broker filter, with Knative's verdict (checked
// against kfilter by TestKnativeCasesAreKnatives).
var knativeCases = []struct {
	name    string
	trigger routing.Trigger
	event   string
	want    bool
}{
	// The Broker's TTL extension is deleted before filtering.
	{"cesql does not see the TTL", trigger("t", routing.Filter{CESQL: "knativebrokerttl < 30"}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a","knativebrokerttl":10}`, false},
	{"cesql in capitals does not see the TTL", trigger("t", routing.Filter{CESQL: "KnativeBrokerTTL < 30"}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a","knativebrokerttl":10}`, false},
	{"cesql: the TTL does not exist", trigger("t", routing.Filter{CESQL: "NOT EXISTS knativebrokerttl AND type = 'a'"}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a","knativebrokerttl":"255"}`, true},
	{"exact does not see the TTL", trigger("t", routing.Filter{Exact: map[string]string{"knativebrokerttl": "10"}}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a","knativebrokerttl":10}`, false},
	{"legacy does not see the TTL", legacy("t", map[string]string{"knativebrokerttl": ""}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a","knativebrokerttl":10}`, false},

	// Knative's attribute lookup gives an event without time the zero time.
	{"legacy any time, event without time", legacy("t", map[string]string{"time": ""}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a"}`, true},
	{"legacy any time, 0.3 event without time", legacy("t", map[string]string{"time": ""}),
		`{"specversion":"0.3","id":"1","source":"s","type":"a"}`, true},
	{"prefix of the zero time", trigger("t", routing.Filter{Prefix: map[string]string{"time": "0001-"}}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a"}`, true},
	{"suffix of the zero time", trigger("t", routing.Filter{Suffix: map[string]string{"time": "Z"}}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a"}`, true},

	// filter.attributes compares strings only; exact compares the text.
	{"legacy string against a typed extension", legacy("t", map[string]string{"count": "-3"}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a","count":-3}`, false},
	{"legacy string against a Boolean extension", legacy("t", map[string]string{"flag": "true"}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a","flag":true}`, false},
	{"legacy string against a string extension", legacy("t", map[string]string{"count": "-3"}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a","count":"-3"}`, true},
	{"legacy any value of a typed extension", legacy("t", map[string]string{"count": ""}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a","count":-3}`, true},
	{"exact against a typed extension", trigger("t", routing.Filter{Exact: map[string]string{"count": "-3"}}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a","count":-3}`, true},

	// filter.attributes' empty value asks for a value that is not "".
	{"legacy any value of an empty extension", legacy("t", map[string]string{"empty": ""}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a","empty":""}`, false},
	{"legacy any value of an empty subject", legacy("t", map[string]string{"subject": ""}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a","subject":""}`, false},

	// The attributes only Knative's lookup knows.
	{"exact datamediatype", trigger("t", routing.Filter{Exact: map[string]string{"datamediatype": "application/json"}}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a","datacontenttype":"application/json; charset=utf-8"}`, true},
	{"exact datacontentencoding of a 0.3 event", trigger("t", routing.Filter{Exact: map[string]string{"datacontentencoding": "base64"}}),
		`{"specversion":"0.3","id":"1","source":"s","type":"a","datacontentencoding":"base64"}`, true},

	// CESQL skips what its lexer cannot read.
	{"cesql with a trailing $", trigger("t", routing.Filter{CESQL: "type = 'a' $"}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a"}`, true},
	{"cesql with a leading _", trigger("t", routing.Filter{CESQL: "_type = 'b'"}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a"}`, false},
	{"cesql with a trailing &&", trigger("t", routing.Filter{CESQL: "type = 'a' &&"}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a"}`, true},
	{"cesql with a trailing ;", trigger("t", routing.Filter{Not: &routing.Filter{CESQL: "type = 'a';"}}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a"}`, false},

	// An exact, prefix or suffix filter with an empty value is left out.
	{"exact with an empty value", trigger("t", routing.Filter{Exact: map[string]string{"type": ""}}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a"}`, true},
	{"not of a filter left out", trigger("t", routing.Filter{Not: &routing.Filter{Prefix: map[string]string{"type": ""}}}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a"}`, true},
	{"any of filters left out", trigger("t", routing.Filter{Any: []routing.Filter{{Suffix: map[string]string{"type": ""}}}}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a"}`, true},
	{"any: a filter left out beside a failing one", trigger("t", routing.Filter{Any: []routing.Filter{
		{Exact: map[string]string{"type": ""}}, {Exact: map[string]string{"type": "b"}},
	}}), `{"specversion":"1.0","id":"1","source":"s","type":"a"}`, false},
	{"any: the last filter has nothing to say", trigger("t", routing.Filter{Any: []routing.Filter{
		{Exact: map[string]string{"type": "b"}}, {Not: &routing.Filter{Exact: map[string]string{"type": ""}}},
	}}), `{"specversion":"1.0","id":"1","source":"s","type":"a"}`, true},
	{"not of an all whose last filter has nothing to say", trigger("t", routing.Filter{Not: &routing.Filter{All: []routing.Filter{
		{Exact: map[string]string{"type": "a"}}, {Not: &routing.Filter{Exact: map[string]string{"type": ""}}},
	}}}), `{"specversion":"1.0","id":"1","source":"s","type":"a"}`, true},
	{"not of an all whose last filter passes", trigger("t", routing.Filter{Not: &routing.Filter{All: []routing.Filter{
		{Not: &routing.Filter{Exact: map[string]string{"type": ""}}}, {Exact: map[string]string{"type": "a"}},
	}}}), `{"specversion":"1.0","id":"1","source":"s","type":"a"}`, false},

	// A CESQL result that is not a Boolean stops Knative's filter.
	{"not of a non-Boolean cesql", trigger("t", routing.Filter{Not: &routing.Filter{CESQL: "type"}}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a"}`, false},
	{"any: a non-Boolean cesql first", trigger("t", routing.Filter{Any: []routing.Filter{
		{CESQL: "1 + 1"}, {Exact: map[string]string{"type": "a"}},
	}}), `{"specversion":"1.0","id":"1","source":"s","type":"a"}`, false},
	{"any: a non-Boolean cesql never reached", trigger("t", routing.Filter{Any: []routing.Filter{
		{Exact: map[string]string{"type": "a"}}, {CESQL: "1 + 1"},
	}}), `{"specversion":"1.0","id":"1","source":"s","type":"a"}`, true},
	{"not of a cesql evaluation error", trigger("t", routing.Filter{Not: &routing.Filter{CESQL: "missing = 'a'"}}),
		`{"specversion":"1.0","id":"1","source":"s","type":"a"}`, true},
}

// TestMatchAsKnative checks Match and Explain on knativeCases.
func TestMatchAsKnative(t *testing.T) {
	verdict := func(matched bool) string {
		if matched {
			return "match"
		}
		return "no-match"
	}
	want, gotMatch, gotExplain := map[string]string{}, map[string]string{}, map[string]string{}
	for _, tc := range knativeCases {
		e, err := readStructuredEvent(json.RawMessage(tc.event))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want[tc.name] = verdict(tc.want)
		m, err := Compile([]routing.Trigger{tc.trigger})
		if err != nil {
			gotMatch[tc.name], gotExplain[tc.name] = "refused", "refused"
			continue
		}
		gotMatch[tc.name] = verdict(len(m.Match(e, nil)) == 1)
		gotExplain[tc.name] = verdict(m.Explain(e)[0].Matched)
	}
	if diff := cmp.Diff(want, gotMatch); diff != "" {
		t.Errorf("Match (-Knative +knc):\n%s", diff)
	}
	if diff := cmp.Diff(want, gotExplain); diff != "" {
		t.Errorf("Explain (-Knative +knc):\n%s", diff)
	}
}

// TestKnativeCasesAreKnatives checks that Knative's Broker filter decides
// knativeCases as the table says.
func TestKnativeCasesAreKnatives(t *testing.T) {
	oracle := &knativeOracle{bin: findKfilter(t), dir: t.TempDir()}
	want, got := map[string]bool{}, map[string]bool{}
	for _, tc := range knativeCases {
		v, err := oracle.run(tc.trigger, []json.RawMessage{json.RawMessage(tc.event)})
		if err != nil {
			t.Fatal(err)
		}
		if v.rejected != "" {
			t.Errorf("%s: Knative's admission refuses the Trigger: %s", tc.name, v.rejected)
		}
		want[tc.name] = tc.want
		got[tc.name] = sameVerdict(v.lines[0], "match")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Knative's verdicts (-table +Knative):\n%s", diff)
	}
}
