package conformance

import (
	"fmt"
	"net/http"
	"testing"
)

// TestBrokerIngress checks the Broker's ingress as Knative's
// test/rekt/features/broker/data_plane.go (DataPlaneIngress) and
// test/rekt/features/knconf/data_plane.go (AcceptsCEVersions) do.
func TestBrokerIngress(t *testing.T) {
	sub := newRecorder(t)
	k := runManifests(t, brokerManifest("default", "")+triggerManifest("all", "default", uri(sub.url("/all")), ""))
	url := k.BrokerURL(namespace, "default")

	// brokerAcceptsBinaryContentMode: three payload media types, each 2xx.
	for _, ct := range []string{"application/vnd.apache.thrift.binary", "application/xml", "application/json"} {
		t.Run("binary mode with "+ct+" is accepted", func(t *testing.T) {
			h := binary("1.0", "binary-"+ct)
			h.Set("Content-Type", ct)
			if resp, _ := post(t, http.MethodPost, url, h, "{}"); resp.StatusCode/100 != 2 {
				t.Fatalf("status %d, want 2xx", resp.StatusCode)
			}
		})
	}
	// brokerAcceptsStructuredContentMode.
	t.Run("structured mode is accepted", func(t *testing.T) {
		body := `{"specversion":"1.0","type":"sometype","source":"json.request.sender","id":"structured-1","time":"2020-07-06T09:23:12Z","datacontenttype":"application/json","data":{"message":"helloworld"}}`
		h := http.Header{"Content-Type": {"application/cloudevents+json"}}
		if resp, _ := post(t, http.MethodPost, url, h, body); resp.StatusCode/100 != 2 {
			t.Fatalf("status %d, want 2xx", resp.StatusCode)
		}
	})
	// brokerRejectsUnknownCEVersion: specversion 19.0 gets a 4xx.
	t.Run("unknown spec version is rejected with 4xx", func(t *testing.T) {
		if resp, _ := post(t, http.MethodPost, url, binary("19.0", "v19"), "{}"); resp.StatusCode/100 != 4 {
			t.Fatalf("status %d, want 4xx", resp.StatusCode)
		}
	})
	// brokerAcceptResponseSuccess: a valid 1.0 event gets a 2xx.
	t.Run("valid event gets 2xx", func(t *testing.T) {
		if resp, _ := post(t, http.MethodPost, url, binary("1.0", "ok-1"), "{}"); resp.StatusCode/100 != 2 {
			t.Fatalf("status %d, want 2xx", resp.StatusCode)
		}
	})
	// brokerRejectsGetRequest: a method other than POST gets 405.
	t.Run("GET is rejected with 405", func(t *testing.T) {
		if resp, _ := post(t, http.MethodGet, url, binary("1.0", "get-1"), ""); resp.StatusCode != http.StatusMethodNotAllowed {
			t.Fatalf("status %d, want 405", resp.StatusCode)
		}
	})
	// brokerRejectsMalformedCE: each required attribute missing gets a
	// 4xx. Knative skips type, source and id for a bug of its own
	// (knative/eventing#5143); knc rejects all four.
	for _, missing := range []string{"Ce-Specversion", "Ce-Type", "Ce-Source", "Ce-Id"} {
		t.Run("missing "+missing+" is rejected with 4xx", func(t *testing.T) {
			h := binary("1.0", "malformed-"+missing)
			h.Del(missing)
			if resp, _ := post(t, http.MethodPost, url, h, "{}"); resp.StatusCode/100 != 4 {
				t.Fatalf("status %d, want 4xx", resp.StatusCode)
			}
		})
	}
	// knative/eventing pkg/broker/ingress/ingress_handler.go: OPTIONS is
	// answered 200 with Allow and the WebHook headers of the CloudEvents
	// HTTP webhook spec.
	t.Run("OPTIONS answers with Allow", func(t *testing.T) {
		resp, _ := post(t, http.MethodOptions, url, nil, "")
		if resp.StatusCode/100 != 2 {
			t.Fatalf("status %d, want 2xx", resp.StatusCode)
		}
		if got := resp.Header.Get("Allow"); got == "" {
			t.Fatalf("no Allow header: %v", resp.Header)
		}
	})
	// Every event accepted above reached the Trigger: "Events accepted by
	// the Broker SHOULD be delivered at least once to all subscribers of
	// all Triggers" (addDataPlaneDelivery).
	t.Run("accepted events are delivered", func(t *testing.T) {
		for _, id := range []string{"binary-application/json", "structured-1", "ok-1"} {
			sub.awaitID(t, "/all", id)
		}
		for _, q := range sub.at("/all") {
			if q.ID() == "v19" || q.ID() == "get-1" {
				t.Errorf("rejected event %s was delivered", q.ID())
			}
		}
	})
}

// TestBrokerDelivery checks what subscribers of a Trigger receive, after
// test/rekt/features/broker/data_plane.go (addDataPlaneDelivery).
func TestBrokerDelivery(t *testing.T) {
	sub := newRecorder(t)
	sub.on("/replier", replyEvent("dev.knc.reply", nil))
	k := runManifests(t,
		brokerManifest("default", "")+
			triggerManifest("all", "default", uri(sub.url("/all")), "  filter:\n    attributes:\n      type: dev.knc.conformance\n")+
			triggerManifest("replier", "default", uri(sub.url("/replier")), "  filter:\n    attributes:\n      type: dev.knc.conformance\n")+
			triggerManifest("replies", "default", uri(sub.url("/replies")), "  filter:\n    attributes:\n      type: dev.knc.reply\n"))
	url := k.BrokerURL(namespace, "default")

	// "All CloudEvent attributes set by the producer, including the data
	// and specversion attributes, SHOULD be received at the subscriber
	// identical to how they were received by the Broker."
	t.Run("attributes and data arrive unchanged", func(t *testing.T) {
		h := binary("1.0", "attrs-1", "Ce-Subject", "s1", "Ce-Time", "2020-07-06T09:23:12Z", "Ce-Dataschema", "https://example.com/schema", "Ce-Myext", "my value")
		h.Set("Content-Type", "application/xml")
		mustAccept(t, url, h, "<a>b</a>")
		got := sub.awaitID(t, "/all", "attrs-1")
		for _, name := range []string{"Ce-Specversion", "Ce-Id", "Ce-Source", "Ce-Type", "Ce-Subject", "Ce-Time", "Ce-Dataschema", "Ce-Myext", "Content-Type"} {
			if got.Header.Get(name) != h.Get(name) {
				t.Errorf("%s = %q, want %q", name, got.Header.Get(name), h.Get(name))
			}
		}
		if string(got.Body) != "<a>b</a>" {
			t.Errorf("data = %q, want %q", got.Body, "<a>b</a>")
		}
	})
	// pkg/kncloudevents/event_dispatcher.go: every delivery asks for a
	// reply with "Prefer: reply".
	t.Run("delivery sends Prefer: reply", func(t *testing.T) {
		got := sub.awaitID(t, "/all", "attrs-1")
		if p := got.Header.Get("Prefer"); p != "reply" {
			t.Errorf("Prefer = %q, want reply", p)
		}
	})
	// "Events contained in delivery responses SHOULD be published to the
	// Broker ingress and processed as if the event had been produced to
	// the Broker's addressable endpoint."
	t.Run("reply is published to the Broker", func(t *testing.T) {
		mustAccept(t, url, binary("1.0", "replied-1"), "{}")
		sub.awaitID(t, "/replies", "reply-replied-1")
	})
}

// TestBrokerTriggerDeliveryFailures checks retries and dead letters after
// test/rekt/features/broker/delivery.go and the dead-letter extensions of
// pkg/kncloudevents/attributes/knative_error.go.
func TestBrokerTriggerDeliveryFailures(t *testing.T) {
	sub := newRecorder(t)
	sub.on("/flaky", failFirst(2, nil))
	sub.on("/broken", status(http.StatusServiceUnavailable))
	sub.on("/rejecting", status(http.StatusBadRequest))
	delivery := func(dls string) string {
		return fmt.Sprintf("  delivery:\n    retry: 2\n    backoffPolicy: linear\n    backoffDelay: PT0.05S\n    deadLetterSink:\n      uri: %s\n", dls)
	}
	k := runManifests(t,
		brokerManifest("default", "")+
			triggerManifest("flaky", "default", uri(sub.url("/flaky")), delivery(sub.url("/dls-flaky")))+
			triggerManifest("broken", "default", uri(sub.url("/broken")), delivery(sub.url("/dls-broken")))+
			triggerManifest("rejecting", "default", uri(sub.url("/rejecting")), delivery(sub.url("/dls-rejecting"))))
	mustAccept(t, k.BrokerURL(namespace, "default"), binary("1.0", "fail-1"), `{"a":1}`)

	t.Run("a retryable failure is retried up to retry times", func(t *testing.T) {
		sub.await(t, "/flaky", 3)
		if n := len(sub.await(t, "/broken", 3)); n != 3 {
			t.Errorf("/broken got %d attempts, want 1 + retry 2", n)
		}
		if n := len(sub.at("/dls-flaky")); n != 0 {
			t.Errorf("the third attempt succeeded, yet %d dead letters", n)
		}
	})
	t.Run("a 400 is not retried", func(t *testing.T) {
		sub.await(t, "/dls-rejecting", 1)
		if n := len(sub.at("/rejecting")); n != 1 {
			t.Errorf("/rejecting got %d attempts, want 1", n)
		}
	})
	t.Run("dead letters carry knativeerrordest, knativeerrorcode and knativeerrordata", func(t *testing.T) {
		dl := sub.await(t, "/dls-broken", 1)[0]
		if got, want := dl.Header.Get("Ce-Knativeerrordest"), sub.url("/broken"); got != want {
			t.Errorf("knativeerrordest = %q, want %q", got, want)
		}
		if got := dl.Header.Get("Ce-Knativeerrorcode"); got != "503" {
			t.Errorf("knativeerrorcode = %q, want 503", got)
		}
		if string(dl.Body) != `{"a":1}` {
			t.Errorf("dead letter data = %q, want the original", dl.Body)
		}
	})
}
