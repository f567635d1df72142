package kept

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFilterQueryRoundTrips(t *testing.T) {
	f := Filter{
		Namespace: "shop", TargetKind: "Trigger", Target: "orders", Type: "t", Source: "/s",
		Reason: ReasonDeadLetterFailed, Since: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		Until: time.Date(2026, 2, 2, 3, 4, 5, 0, time.UTC), IDs: []string{"shop/1", "shop/7"},
	}
	got, err := FilterOf(f.Query())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := FilterOf(map[string][]string{"since": {"yesterday"}}); err == nil {
		t.Error("a since that is not a time was read")
	}
}

func TestFilterMatch(t *testing.T) {
	at := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	l := Letter{ID: "shop/3", Namespace: "shop", Reason: ReasonNoDeadLetterSink, TargetKind: "Trigger", Target: "orders",
		KeptAt: at, Event: EventSummary{Type: "t", Source: "/s"}}
	for _, tt := range []struct {
		name string
		f    Filter
		want bool
	}{
		{"all", Filter{}, true},
		{"its target", Filter{TargetKind: "Trigger", Target: "orders"}, true},
		{"a Subscription of the same name", Filter{TargetKind: "Subscription", Target: "orders"}, false},
		{"another namespace", Filter{Namespace: "other"}, false},
		{"another type", Filter{Type: "u"}, false},
		{"another source", Filter{Source: "/u"}, false},
		{"another reason", Filter{Reason: ReasonDeadLetterFailed}, false},
		{"kept before since", Filter{Since: at.Add(time.Second)}, false},
		{"kept after until", Filter{Until: at.Add(-time.Second)}, false},
		{"within the range", Filter{Since: at.Add(-time.Second), Until: at.Add(time.Second)}, true},
		{"its ID", Filter{IDs: []string{"shop/9", "shop/3"}}, true},
		{"other IDs", Filter{IDs: []string{"shop/9"}}, false},
	} {
		if got := tt.f.Match(l); got != tt.want {
			t.Errorf("%s: Match = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestParseID(t *testing.T) {
	ns, seq, err := ParseID(ID("shop", 42))
	if err != nil || ns != "shop" || seq != 42 {
		t.Errorf("ParseID(ID(shop, 42)) = %q, %d, %v", ns, seq, err)
	}
	for _, bad := range []string{"", "shop", "shop/", "/4", "shop/0", "shop/x", "shop/-1"} {
		if _, _, err := ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) took it", bad)
		}
	}
}

func TestNames(t *testing.T) {
	if ns, ok := NamespaceOf(StreamName("shop")); !ok || ns != "shop" {
		t.Errorf("NamespaceOf(StreamName(shop)) = %q, %v", ns, ok)
	}
	for _, other := range []string{"knc_kept_", "knc_shop_b_in", "kept_shop"} {
		if ns, ok := NamespaceOf(other); ok {
			t.Errorf("NamespaceOf(%q) = %q: not a stream of letters", other, ns)
		}
	}
	if seq, ok := ReplayedSeq(ReplayedSubject("shop", 42)); !ok || seq != 42 {
		t.Errorf("ReplayedSeq(ReplayedSubject(shop, 42)) = %d, %v", seq, ok)
	}
	for _, other := range []string{Subject("shop", "b", "t"), "knc.kept.shop.replayed.x", "knc.kept.replayed.7", "other.shop.replayed.7"} {
		if seq, ok := ReplayedSeq(other); ok {
			t.Errorf("ReplayedSeq(%q) = %d: not a mark", other, seq)
		}
	}
	for _, name := range []string{HeaderReason, HeaderSourceKind, HeaderSource, HeaderSourceID, HeaderTargetKind, HeaderTarget,
		HeaderTargetToken, HeaderDestination, HeaderStatus, HeaderError, HeaderAttempts, HeaderKeptAt, HeaderErrorDest, HeaderErrorCode, HeaderErrorData} {
		if !strings.HasPrefix(name, HeaderPrefix) {
			t.Errorf("header %s does not start with %s: a replay would send it", name, HeaderPrefix)
		}
	}
}
