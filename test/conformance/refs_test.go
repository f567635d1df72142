package conformance

import (
	"fmt"
	"net"
	"net/http"
	"testing"
)

// TestReferencesToServedObjects checks that a Trigger or Subscription whose
// subscriber, reply or dead-letter sink is a ref to a Broker or Channel of
// the same runtime delivers there. Knative resolves such a ref to the
// referent's status.address.url (the Addressable duck type, knative/specs
// specs/eventing/control-plane.md); `knc run` serves every Broker and
// Channel at its own listener, so that is the address it must use.
// Topology after test/rekt/features/channel/topology.go and
// test/rekt/features/broker/topology.go.
func TestReferencesToServedObjects(t *testing.T) {
	sub := newRecorder(t)
	sub.on("/replier", replyEvent("dev.knc.reply", nil))
	sub.on("/broken", status(http.StatusInternalServerError))
	dlsToChannel := "  delivery:\n    retry: 1\n    backoffDelay: PT0.05S\n    deadLetterSink:\n" + indent(ref("Channel", "dead-letters"))
	k := runManifests(t,
		brokerManifest("default", "")+
			channelManifest("fanout", "")+
			channelManifest("dead-letters", "")+
			// Broker → Trigger → Channel → Subscription.
			triggerManifest("to-channel", "default", ref("Channel", "fanout"), "  filter:\n    attributes:\n      type: dev.knc.conformance\n")+
			subscriptionManifest("fanout-sub", "fanout", uri(sub.url("/from-channel")), "")+
			// Channel → Subscription → reply to the Broker.
			subscriptionManifest("replying", "fanout", uri(sub.url("/replier")), "  reply:\n"+ref("Broker", "default"))+
			triggerManifest("replies", "default", uri(sub.url("/replies")), "  filter:\n    attributes:\n      type: dev.knc.reply\n")+
			// A dead-letter sink that is a Channel.
			triggerManifest("broken", "default", uri(sub.url("/broken")), "  filter:\n    attributes:\n      type: dev.knc.conformance\n"+dlsToChannel)+
			subscriptionManifest("dead-letters-sub", "dead-letters", uri(sub.url("/dead-letters")), ""))
	mustAccept(t, k.BrokerURL(namespace, "default"), binary("1.0", "ref-1"), "{}")

	t.Run("a Trigger's subscriber ref to a Channel delivers through it", func(t *testing.T) {
		sub.awaitID(t, "/from-channel", "ref-1")
	})
	t.Run("a Subscription's reply ref to a Broker delivers through it", func(t *testing.T) {
		sub.awaitID(t, "/replies", "reply-ref-1")
	})
	t.Run("a dead-letter sink ref to a Channel delivers through it", func(t *testing.T) {
		got := sub.awaitID(t, "/dead-letters", "ref-1")
		if got.Header.Get("Ce-Knativeerrorcode") != "500" {
			t.Errorf("knativeerrorcode = %q, want 500", got.Header.Get("Ce-Knativeerrorcode"))
		}
	})
}

// TestUnreachableDestinationIsDeadLettered checks that a destination that
// cannot be reached, by name (DNS) or by port (connection refused), is
// retried and then dead-lettered, never dropped: "Events accepted by the
// Broker SHOULD be delivered at least once" and the retry rules of
// knative/specs specs/eventing/data-plane.md; pkg/kncloudevents/
// event_dispatcher.go reports such a failure as 500 "dispatch error".
func TestUnreachableDestinationIsDeadLettered(t *testing.T) {
	sub := newRecorder(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/"
	ln.Close()
	delivery := func(dls string) string {
		return fmt.Sprintf("  delivery:\n    retry: 2\n    backoffPolicy: linear\n    backoffDelay: PT0.05S\n    deadLetterSink:\n      uri: %s\n", dls)
	}
	k := runManifests(t,
		brokerManifest("default", "")+
			triggerManifest("no-such-host", "default", uri("http://no-such-host.invalid/"), delivery(sub.url("/dls-dns")))+
			triggerManifest("refused", "default", uri(refused), delivery(sub.url("/dls-refused")))+
			triggerManifest("no-sink", "default", uri("http://no-such-host.invalid/"), "  delivery:\n    retry: 1\n    backoffDelay: PT0.05S\n"))
	mustAccept(t, k.BrokerURL(namespace, "default"), binary("1.0", "unreachable-1"), "{}")
	for path, dest := range map[string]string{"/dls-dns": "http://no-such-host.invalid/", "/dls-refused": refused} {
		t.Run(path, func(t *testing.T) {
			got := sub.awaitID(t, path, "unreachable-1")
			if got.Header.Get("Ce-Knativeerrordest") != dest {
				t.Errorf("knativeerrordest = %q, want %q", got.Header.Get("Ce-Knativeerrordest"), dest)
			}
			if got.Header.Get("Ce-Knativeerrorcode") != "500" {
				t.Errorf("knativeerrorcode = %q, want 500", got.Header.Get("Ce-Knativeerrorcode"))
			}
		})
	}
	// Lost events stay 0: accepted = delivered + dead-lettered + kept + dropped,
	// by a reason knc already had.
	t.Run("accounting settles every delivery", func(t *testing.T) {
		awaitSettled(t, k, map[string]outcomes{
			"trigger/no-such-host": {Accepted: 1, DeadLettered: 1},
			"trigger/refused":      {Accepted: 1, DeadLettered: 1},
			"trigger/no-sink":      {Accepted: 1, Kept: map[string]float64{"no-dead-letter-sink": 1}},
		})
	})
}

// indent adds two spaces to a destination body, for a field one level
// deeper (delivery.deadLetterSink).
func indent(s string) string {
	out := ""
	for _, line := range splitLines(s) {
		out += "  " + line + "\n"
	}
	return out
}

func splitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			lines = append(lines, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}
