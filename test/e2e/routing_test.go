package e2e

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/test/rig"
)

// ids returns the event ids of reqs, sorted.
func ids(reqs []request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.ID())
	}
	slices.Sort(out)
	return out
}

func TestFilters(t *testing.T) {
	sub := newSubscriber(t)
	k := startKnc(t, table([]routing.Broker{broker("filters",
		routing.Trigger{Source: obj("exact"), Subscriber: uri(sub.url("/exact")),
			Filters: []routing.Filter{{Exact: map[string]string{"type": "order.created"}}}},
		routing.Trigger{Source: obj("prefix"), Subscriber: uri(sub.url("/prefix")),
			Filters: []routing.Filter{{Prefix: map[string]string{"source": "/shop/"}}}},
		routing.Trigger{Source: obj("cesql"), Subscriber: uri(sub.url("/cesql")),
			Filters: []routing.Filter{{CESQL: "source LIKE '/shop/%' AND subject = 'vip'"}}},
		routing.Trigger{Source: obj("attributes"), Subscriber: uri(sub.url("/attributes")),
			Attributes: map[string]string{"type": "order.created", "subject": ""}},
		routing.Trigger{Source: obj("not"), Subscriber: uri(sub.url("/not")),
			Filters: []routing.Filter{{Not: &routing.Filter{Suffix: map[string]string{"type": ".created"}}}}},
		// Two Triggers with one subscriber: two deliveries per event.
		routing.Trigger{Source: obj("shared-1"), Subscriber: uri(sub.url("/shared"))},
		routing.Trigger{Source: obj("shared-2"), Subscriber: uri(sub.url("/shared"))},
	)}))
	send := func(id, typ, source, subject string) {
		e := event{id: id, typ: typ, source: source}
		if subject != "" {
			e.ext = map[string]string{"subject": subject}
		}
		mustSend(t, k.brokerURL("filters"), e)
	}
	send("e1", "order.created", "/shop/1", "vip")
	send("e2", "order.created", "/other", "")
	send("e3", "order.deleted", "/shop/2", "x")

	want := map[string][]string{
		"/exact":      {"e1", "e2"},
		"/prefix":     {"e1", "e3"},
		"/cesql":      {"e1"},
		"/attributes": {"e1"},
		"/not":        {"e3"},
		"/shared":     {"e1", "e1", "e2", "e2", "e3", "e3"},
	}
	for path, w := range want {
		sub.waitFor(t, path, len(w))
	}
	got := map[string][]string{}
	for path := range want {
		got[path] = ids(sub.requests(path))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("deliveries per trigger (-want +got):\n%s", d)
	}
}

func TestTriggerReplies(t *testing.T) {
	sub := newSubscriber(t)
	// The catch-all Trigger replies to "a" with "b"; the reply comes back
	// through the Broker to every Trigger, the catch-all one included.
	sub.on("/all", func(w http.ResponseWriter, r *http.Request, n int) {
		if r.Header.Get("Ce-Type") == "a" {
			replyWith("reply", "b", "reply body")(w, r, n)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	k := startKnc(t, table([]routing.Broker{broker("replies",
		routing.Trigger{Source: obj("all"), Subscriber: uri(sub.url("/all"))},
		routing.Trigger{Source: obj("only-b"), Subscriber: uri(sub.url("/b")), Attributes: map[string]string{"type": "b"}},
	)}))
	mustSend(t, k.brokerURL("replies"), event{id: "first", typ: "a"})

	all := sub.waitFor(t, "/all", 2)
	b := sub.waitFor(t, "/b", 1)
	if d := cmp.Diff([]string{"first", "reply-1"}, ids(all)); d != "" {
		t.Errorf("catch-all deliveries (-want +got):\n%s", d)
	}
	if got := b[0]; got.ID() != "reply-1" || string(got.Body) != "reply body" {
		t.Errorf("type b trigger got event %q with body %q, want the reply", got.ID(), got.Body)
	}
	// Knative's Broker filter removes knativebrokerttl before it delivers.
	for _, r := range all {
		if v := r.Header.Get("Ce-Knativebrokerttl"); v != "" {
			t.Errorf("%s delivered with knativebrokerttl %q", r.ID(), v)
		}
	}
}

func TestTTLStopsReplyLoop(t *testing.T) {
	sub := newSubscriber(t)
	sub.on("/loop", replyWith("again", "loop", "x"))
	k := startKnc(t, table([]routing.Broker{broker("loop", trig("loop", sub.url("/loop"), nil))}))
	mustSend(t, k.brokerURL("loop"), event{id: "start", typ: "loop", ext: map[string]string{"knativebrokerttl": "4"}})
	// The reply that would exceed the TTL is kept as a letter of the
	// Trigger, not dropped.
	rig.Eventually(t, 20*time.Second, "the reply loop to be cut", func() bool {
		return metric(t, k.URL(), "knc_deliveries_kept_total", map[string]string{"target": "loop", "reason": "ttl"}) == 1
	})
	if n := metric(t, k.URL(), "knc_events_kept_total", map[string]string{"name": "loop", "reason": "ttl"}); n != 1 {
		t.Errorf("knc_events_kept_total{reason=ttl} = %v, want 1", n)
	}
	if n := metric(t, k.URL(), "knc_events_dropped_total", map[string]string{"name": "loop"}); n != 0 {
		t.Errorf("knc_events_dropped_total = %v, want 0: the reply is kept", n)
	}
	// The ingress decrements TTL 4 to 3, and each reply decrements it
	// again: deliveries with TTL 3, 2 and 1, then the reply is kept.
	if n := len(sub.requests("/loop")); n != 3 {
		t.Errorf("the loop delivered %d times, want 3", n)
	}
}

func TestChannels(t *testing.T) {
	sub := newSubscriber(t)
	sub.on("/replier", replyWith("sub-reply", "reply", "from subscriber"))
	sub.on("/replier-flaky", replyWith("flaky-reply", "reply", "r"))
	sub.on("/replier-to-broker", replyWith("to-broker", "from.channel", "r"))
	sub.on("/replier-nowhere", replyWith("lost", "reply", "r"))
	sub.on("/reply-flaky", func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	dest := func(path string) *routing.Destination { return &routing.Destination{URI: sub.url(path)} }
	sub2 := func(name, path string) routing.Subscription {
		return routing.Subscription{Source: obj(name), Subscriber: dest(path)}
	}
	retry := &routing.Delivery{Retry: 2, BackoffPolicy: routing.BackoffLinear, BackoffDelay: ms(20)}
	k := startKnc(t, table(
		[]routing.Broker{broker("sink", trig("from-channel", sub.url("/from-channel"), nil))},
		channel("fanout", sub2("s1", "/a"), sub2("s2", "/b"), sub2("s3", "/a")),
		channel("reply", routing.Subscription{Source: obj("s-reply"), Subscriber: dest("/replier"), Reply: dest("/reply-dest")}),
		channel("reply-flaky", routing.Subscription{Source: obj("s-flaky"), Subscriber: dest("/replier-flaky"), Reply: dest("/reply-flaky"), Delivery: retry}),
		channel("reply-broker", routing.Subscription{Source: obj("s-broker"), Subscriber: dest("/replier-to-broker"),
			Reply: &routing.Destination{Ref: &routing.Ref{APIVersion: "eventing.knative.dev/v1", Kind: "Broker", Namespace: "e2e", Name: "sink"}}}),
		channel("no-reply", sub2("s-nowhere", "/replier-nowhere")),
		channel("reply-only", routing.Subscription{Source: obj("s-only-reply"), Reply: dest("/only-reply")}),
	))
	for _, c := range []string{"fanout", "reply", "reply-flaky", "reply-broker", "no-reply", "reply-only"} {
		mustSend(t, k.channelURL(c), event{id: "to-" + c, typ: "t"})
	}
	t.Run("fan-out to every subscription", func(t *testing.T) {
		if got := ids(sub.waitFor(t, "/a", 2)); !slices.Equal(got, []string{"to-fanout", "to-fanout"}) {
			t.Errorf("/a got %v, want the event twice (two subscriptions)", got)
		}
		if got := ids(sub.waitFor(t, "/b", 1)); !slices.Equal(got, []string{"to-fanout"}) {
			t.Errorf("/b got %v", got)
		}
	})
	t.Run("reply goes to the reply destination", func(t *testing.T) {
		got := sub.waitFor(t, "/reply-dest", 1)
		if got[0].ID() != "sub-reply-1" || string(got[0].Body) != "from subscriber" {
			t.Errorf("reply destination got %q %q", got[0].ID(), got[0].Body)
		}
	})
	// The reply has attempts of its own, as in Knative's dispatcher: the
	// subscriber is not called again because its reply failed.
	t.Run("failed reply is retried on its own", func(t *testing.T) {
		sub.waitFor(t, "/reply-flaky", 2)
		if got := len(sub.requests("/replier-flaky")); got != 1 {
			t.Errorf("subscriber got %d attempts, want 1", got)
		}
	})
	t.Run("reply to a broker of the table", func(t *testing.T) {
		got := sub.waitFor(t, "/from-channel", 1)
		if got[0].ID() != "to-broker-1" {
			t.Errorf("broker's trigger got %q, want the subscription's reply", got[0].ID())
		}
	})
	t.Run("reply without destination is dropped", func(t *testing.T) {
		sub.waitFor(t, "/replier-nowhere", 1)
		rig.Eventually(t, 10*time.Second, "the drop to be counted", func() bool {
			return metric(t, k.URL(), "knc_events_dropped_total", map[string]string{"name": "no-reply", "reason": "no-reply-destination"}) == 1
		})
	})
	t.Run("reply-only subscription delivers to its reply", func(t *testing.T) {
		sub.waitFor(t, "/only-reply", 1)
	})
}

func TestDeliveryFormatKeepsPayload(t *testing.T) {
	sub := newSubscriber(t)
	k := startKnc(t, table([]routing.Broker{broker("formats",
		trig("as-binary", sub.url("/binary"), &routing.Delivery{Format: routing.FormatBinary}),
		trig("as-json", sub.url("/json"), &routing.Delivery{Format: routing.FormatJSON}),
	)}))
	raw := []byte{0x00, 0x01, 0xfe, 0xff, 0x80, '\n', ' '}
	mustSend(t, k.brokerURL("formats"), event{id: "bytes", typ: "t", contentType: "application/octet-stream", body: raw})
	const jsonData = `{"a": 1,  "b":[1, 2]}`
	req, _ := http.NewRequest(http.MethodPost, k.brokerURL("formats"), strings.NewReader(
		`{"specversion":"1.0","id":"json","source":"/e2e","type":"t","datacontenttype":"application/json","data":`+jsonData+`}`))
	req.Header.Set("Content-Type", "application/cloudevents+json")
	if code := do(t, req); code != http.StatusAccepted {
		t.Fatalf("structured POST = %d", code)
	}
	binary := sub.waitFor(t, "/binary", 2)
	structured := sub.waitFor(t, "/json", 2)
	byID := func(reqs []request, id string) request {
		for _, r := range reqs {
			if r.ID() == id {
				return r
			}
		}
		t.Fatalf("no delivery of %s", id)
		return request{}
	}

	b := byID(binary, "bytes")
	if ct := b.Header.Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("binary delivery Content-Type = %q", ct)
	}
	if string(b.Body) != string(raw) {
		t.Errorf("binary delivery body = %q, want %q", b.Body, raw)
	}
	if got := string(byID(binary, "json").Body); got != jsonData {
		t.Errorf("binary delivery of a structured event: body %q, want %q", got, jsonData)
	}

	var sj struct {
		ID         string          `json:"id"`
		Data       json.RawMessage `json:"data"`
		DataBase64 string          `json:"data_base64"`
	}
	s := byID(structured, "bytes")
	if ct := s.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/cloudevents+json") {
		t.Errorf("json delivery Content-Type = %q", ct)
	}
	if err := json.Unmarshal(s.Body, &sj); err != nil {
		t.Fatalf("json delivery is not JSON: %v\n%s", err, s.Body)
	}
	if got, err := base64.StdEncoding.DecodeString(sj.DataBase64); err != nil || string(got) != string(raw) {
		t.Errorf("json delivery data_base64 = %q (%v), want %q", got, err, raw)
	}
	sj.Data = nil
	if err := json.Unmarshal(byID(structured, "json").Body, &sj); err != nil {
		t.Fatal(err)
	}
	if string(sj.Data) != jsonData {
		t.Errorf("json delivery data = %s, want %s byte for byte", sj.Data, jsonData)
	}
}
