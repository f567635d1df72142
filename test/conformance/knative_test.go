package conformance

import (
	"fmt"
	"net/http"
	"testing"
)

// TestOptions checks the answer to an OPTIONS probe of a Broker and a
// Channel: 200 with Allow and the WebHook-Allowed-Origin and
// WebHook-Allowed-Rate headers of the CloudEvents HTTP webhook spec, as
// Knative's pkg/broker/ingress/ingress_handler.go and
// pkg/channel/event_receiver.go answer it.
func TestOptions(t *testing.T) {
	k := runManifests(t, brokerManifest("default", "")+channelManifest("ch", ""))
	for name, url := range map[string]string{"Broker": k.BrokerURL(namespace, "default"), "Channel": k.ChannelURL(namespace, "ch")} {
		t.Run(name, func(t *testing.T) {
			resp, _ := post(t, http.MethodOptions, url, nil, "")
			if resp.StatusCode != http.StatusOK {
				t.Errorf("status %d, want 200", resp.StatusCode)
			}
			for h, want := range map[string]string{"WebHook-Allowed-Origin": "*", "WebHook-Allowed-Rate": "*", "Allow": "POST, OPTIONS"} {
				if got := resp.Header.Get(h); got != want {
					t.Errorf("%s = %q, want %q", h, got, want)
				}
			}
		})
	}
}

// TestBrokerTTL checks knativebrokerttl as Knative's Broker handles it:
// its ingress decrements the TTL and rejects an event whose TTL reaches 0
// with 400 (pkg/broker/ingress/ingress_handler.go, pkg/broker/ttl.go), and
// its filter removes the TTL from what the subscriber receives
// (pkg/broker/filter/filter_handler.go). A reply re-enters the ingress with
// the TTL its event was delivered with, so an event sent with TTL 3 to a
// Trigger that always replies with the same type is delivered twice.
func TestBrokerTTL(t *testing.T) {
	sub := newRecorder(t)
	sub.on("/loop", replyEvent("dev.knc.loop", nil))
	k := runManifests(t,
		brokerManifest("default", "")+
			triggerManifest("loop", "default", uri(sub.url("/loop")), "  filter:\n    attributes:\n      type: dev.knc.loop\n")+
			triggerManifest("plain", "default", uri(sub.url("/plain")), "  filter:\n    attributes:\n      type: dev.knc.conformance\n"))
	url := k.BrokerURL(namespace, "default")

	t.Run("subscribers do not receive knativebrokerttl", func(t *testing.T) {
		mustAccept(t, url, binary("1.0", "ttl-plain"), "{}")
		if v := sub.awaitID(t, "/plain", "ttl-plain").Header.Get("Ce-Knativebrokerttl"); v != "" {
			t.Errorf("delivered with knativebrokerttl %q", v)
		}
	})
	t.Run("an event with TTL 1 is rejected with 400", func(t *testing.T) {
		if resp, _ := post(t, http.MethodPost, url, binary("1.0", "ttl-1", "Ce-Knativebrokerttl", "1"), "{}"); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("status %d, want 400", resp.StatusCode)
		}
	})
	t.Run("an event sent with TTL 3 into a reply loop is delivered twice", func(t *testing.T) {
		h := binary("1.0", "ttl-3", "Ce-Knativebrokerttl", "3")
		h.Set("Ce-Type", "dev.knc.loop")
		mustAccept(t, url, h, "{}")
		sub.await(t, "/loop", 2)
		// Both deliveries succeed; the second one's reply, whose TTL is
		// exhausted, is not routed but kept as a letter of the Trigger
		// (reason ttl), which is no outcome of a delivery.
		awaitSettled(t, k, map[string]outcomes{"trigger/loop": {Accepted: 2, Delivered: 2, Kept: map[string]float64{"ttl": 1}}})
		if n := len(sub.at("/loop")); n != 2 {
			t.Errorf("the loop ran %d times, want 2", n)
		}
	})
}

// TestMalformedReply checks "Events contained in delivery responses that
// are malformed SHOULD be treated as if the event delivery had failed"
// (test/rekt/features/broker/data_plane.go). Knative's Broker filter
// answers a 2xx whose non-empty body is no CloudEvent with 502, which is
// retried and dead-lettered (pkg/broker/filter/filter_handler.go); its
// Channel dispatcher ignores such a body (pkg/kncloudevents/
// event_dispatcher.go).
func TestMalformedReply(t *testing.T) {
	sub := newRecorder(t)
	text := func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("OK"))
	}
	sub.on("/trigger", text)
	sub.on("/subscription", text)
	delivery := func(dls string) string {
		return fmt.Sprintf("  delivery:\n    retry: 1\n    backoffDelay: PT0.05S\n    deadLetterSink:\n      uri: %s\n", dls)
	}
	k := runManifests(t,
		brokerManifest("default", "")+
			triggerManifest("t", "default", uri(sub.url("/trigger")), delivery(sub.url("/trigger-dls")))+
			channelManifest("ch", "")+
			subscriptionManifest("s", "ch", uri(sub.url("/subscription")), delivery(sub.url("/subscription-dls"))))
	mustAccept(t, k.BrokerURL(namespace, "default"), binary("1.0", "malformed-reply"), "{}")
	mustAccept(t, k.ChannelURL(namespace, "ch"), binary("1.0", "malformed-reply"), "{}")

	t.Run("a Trigger's 200 with a body that is no CloudEvent is retried and dead-lettered", func(t *testing.T) {
		dl := sub.awaitID(t, "/trigger-dls", "malformed-reply")
		if n := len(sub.at("/trigger")); n != 2 {
			t.Errorf("%d attempts, want 1 + retry 1", n)
		}
		if v := dl.Header.Get("Ce-Knativeerrorcode"); v != "502" {
			t.Errorf("knativeerrorcode = %q, want 502", v)
		}
	})
	t.Run("a Subscription's 200 with a body that is no CloudEvent is delivered", func(t *testing.T) {
		awaitSettled(t, k, map[string]outcomes{"subscription/s": {Accepted: 1, Delivered: 1}})
		if n := len(sub.at("/subscription")); n != 1 {
			t.Errorf("%d attempts, want 1", n)
		}
	})
}

// TestSubscriptionReplyRetries checks the topology of
// test/rekt/features/channel/topology.go and its expected patterns
// (createExpectedEventPatterns), as pkg/kncloudevents/event_dispatcher.go
// behaves: the subscriber and the reply destination each get 1 + retry
// attempts, the subscriber is not called again because its reply failed,
// and a reply that fails every attempt sends the original event to the
// dead-letter sink with knativeerrordest naming the reply destination.
func TestSubscriptionReplyRetries(t *testing.T) {
	sub := newRecorder(t)
	for _, s := range []string{"sub3", "sub4"} {
		sub.on("/"+s, failFirst(1, replyEvent("dev.knc.reply", nil)))
	}
	sub.on("/sub3-reply", failFirst(1, nil))
	sub.on("/sub4-reply", failFirst(2, nil))
	subscription := func(name string) string {
		extra := fmt.Sprintf("  reply:\n    uri: %s\n  delivery:\n    retry: 1\n    backoffDelay: PT0.05S\n    deadLetterSink:\n      uri: %s\n", sub.url("/"+name+"-reply"), sub.url("/"+name+"-dls"))
		return subscriptionManifest(name, "ch", uri(sub.url("/"+name)), extra)
	}
	k := runManifests(t, channelManifest("ch", "")+subscription("sub3")+subscription("sub4"))
	mustAccept(t, k.ChannelURL(namespace, "ch"), binary("1.0", "topology-1"), "{}")
	awaitSettled(t, k, map[string]outcomes{
		"subscription/sub3": {Accepted: 1, Delivered: 1},
		"subscription/sub4": {Accepted: 1, DeadLettered: 1},
	})

	t.Run("a reply that fails once is retried, the subscriber is called twice", func(t *testing.T) {
		if n := len(sub.at("/sub3")); n != 2 {
			t.Errorf("subscriber called %d times, want 2 (fail, success)", n)
		}
		if n := len(sub.at("/sub3-reply")); n != 2 {
			t.Errorf("reply destination called %d times, want 2 (fail, success)", n)
		}
		if n := len(sub.at("/sub3-dls")); n != 0 {
			t.Errorf("%d dead letters, want none", n)
		}
	})
	t.Run("a reply that fails every attempt dead-letters the event, the subscriber is called twice", func(t *testing.T) {
		if n := len(sub.at("/sub4")); n != 2 {
			t.Errorf("subscriber called %d times, want 2 (fail, success)", n)
		}
		if n := len(sub.at("/sub4-reply")); n != 2 {
			t.Errorf("reply destination called %d times, want 1 + retry 1", n)
		}
		dl := sub.awaitID(t, "/sub4-dls", "topology-1")
		if v := dl.Header.Get("Ce-Knativeerrordest"); v != sub.url("/sub4-reply") {
			t.Errorf("knativeerrordest = %q, want the reply destination", v)
		}
	})
}
