package conformance

import (
	"fmt"
	"net/http"
	"testing"
)

// sentHeaders are the non-CloudEvents headers a producer sends with each
// event of TestDeliveryHeaders.
var sentHeaders = []string{
	"Knative-Hello", "world",
	"X-B3-Traceid", "463ac35c9f6413ad48485a3953bb6124",
	"X-Request-Id", "req-1",
	"Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
	"Tracestate", "vendor=opaque",
	"X-Private", "not forwarded",
}

// TestDeliveryHeaders checks the headers a delivery carries besides the
// event: Kn-Namespace, set by Knative's Broker filter to the Trigger's
// namespace (pkg/broker/filter/filter_handler.go) and by its Channel
// fan-out to the Subscription's (pkg/channel/fanout/
// fanout_event_handler.go); the headers Knative's receivers pass through
// (pkg/utils/headers.go, and test/conformance/helpers/
// channel_header_single_event_helper.go, which sends knative-hello: world
// and wants it at the subscriber); and the W3C trace context, which "The
// Channel MUST recognize and pass through ... from sender to subscribers"
// (test/rekt/features/channel/data_plane.go) and the Broker "SHOULD
// preserve ... on delivery to subscribers and on reply events"
// (test/rekt/features/broker/data_plane.go).
func TestDeliveryHeaders(t *testing.T) {
	sub := newRecorder(t)
	sub.on("/replier", replyEvent("dev.knc.reply", http.Header{"Knative-From-Reply": {"yes"}, "X-Private-Reply": {"no"}}))
	sub.on("/broken", status(http.StatusBadRequest))
	k := runManifests(t,
		brokerManifest("default", "")+
			triggerManifest("t", "default", uri(sub.url("/trigger")), "  filter:\n    attributes:\n      type: dev.knc.conformance\n")+
			triggerManifest("replies", "default", uri(sub.url("/broker-reply")), "  filter:\n    attributes:\n      type: dev.knc.reply\n")+
			triggerManifest("replier", "default", uri(sub.url("/replier")), "  filter:\n    attributes:\n      type: dev.knc.conformance\n")+
			triggerManifest("broken", "default", uri(sub.url("/broken")), fmt.Sprintf("  filter:\n    attributes:\n      type: dev.knc.conformance\n  delivery:\n    deadLetterSink:\n      uri: %s\n", sub.url("/dls")))+
			channelManifest("ch", "")+
			subscriptionManifest("s", "ch", uri(sub.url("/subscription")), "")+
			subscriptionManifest("s-replier", "ch", uri(sub.url("/replier")), fmt.Sprintf("  reply:\n    uri: %s\n", sub.url("/channel-reply"))))
	mustAccept(t, k.BrokerURL(namespace, "default"), binary("1.0", "hdr-broker", sentHeaders...), "{}")
	mustAccept(t, k.ChannelURL(namespace, "ch"), binary("1.0", "hdr-channel", sentHeaders...), "{}")

	forwarded := func(t *testing.T, got received) {
		t.Helper()
		for i := 0; i < len(sentHeaders); i += 2 {
			name, value := sentHeaders[i], sentHeaders[i+1]
			if name == "X-Private" {
				if v := got.Header.Get(name); v != "" {
					t.Errorf("%s was forwarded: %q", name, v)
				}
				continue
			}
			if v := got.Header.Get(name); v != value {
				t.Errorf("%s = %q, want %q", name, v, value)
			}
		}
	}
	for _, tt := range []struct{ name, path, id string }{
		{"Trigger", "/trigger", "hdr-broker"},
		{"Subscription", "/subscription", "hdr-channel"},
		{"Trigger's dead-letter sink", "/dls", "hdr-broker"},
	} {
		t.Run(tt.name+" delivery carries Kn-Namespace", func(t *testing.T) {
			if v := sub.awaitID(t, tt.path, tt.id).Header.Get("Kn-Namespace"); v != namespace {
				t.Errorf("Kn-Namespace = %q, want %q", v, namespace)
			}
		})
		t.Run(tt.name+" delivery passes Knative-*, X-B3-*, X-Request-Id and trace context through", func(t *testing.T) {
			forwarded(t, sub.awaitID(t, tt.path, tt.id))
		})
	}
	// pkg/kncloudevents/event_dispatcher.go: a reply goes on with the
	// reply's own pass-through headers and Kn-Namespace; the trace context
	// is the original event's unless the reply brings its own.
	for _, tt := range []struct{ name, path, id string }{
		{"Subscription reply", "/channel-reply", "reply-hdr-channel"},
		{"Trigger reply", "/broker-reply", "reply-hdr-broker"},
	} {
		t.Run(tt.name+" carries the reply's pass-through headers and the trace context", func(t *testing.T) {
			got := sub.awaitID(t, tt.path, tt.id)
			if v := got.Header.Get("Knative-From-Reply"); v != "yes" {
				t.Errorf("Knative-From-Reply = %q, want yes", v)
			}
			if v := got.Header.Get("X-Private-Reply"); v != "" {
				t.Errorf("X-Private-Reply was forwarded: %q", v)
			}
			if v := got.Header.Get("Traceparent"); v != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" {
				t.Errorf("Traceparent = %q, want the original event's", v)
			}
			if v := got.Header.Get("Kn-Namespace"); v != namespace {
				t.Errorf("Kn-Namespace = %q, want %q", v, namespace)
			}
		})
	}
	// The distributed-tracing extension is an attribute like any other:
	// it arrives unchanged.
	t.Run("distributed-tracing extension passes unchanged", func(t *testing.T) {
		mustAccept(t, k.BrokerURL(namespace, "default"), binary("1.0", "hdr-ext", "Ce-Traceparent", "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01", "Ce-Tracestate", "a=b"), "{}")
		got := sub.awaitID(t, "/trigger", "hdr-ext")
		if got.Header.Get("Ce-Traceparent") != "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01" || got.Header.Get("Ce-Tracestate") != "a=b" {
			t.Errorf("ce-traceparent %q, ce-tracestate %q", got.Header.Get("Ce-Traceparent"), got.Header.Get("Ce-Tracestate"))
		}
	})
}
