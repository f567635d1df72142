package conformance

import (
	"fmt"
	"net/http"
	"testing"
)

// TestChannelIngress checks a Channel's address after
// test/rekt/features/channel/data_plane.go (ChannelDataPlaneConformance:
// the Input requirements) and test/rekt/features/knconf/data_plane.go.
func TestChannelIngress(t *testing.T) {
	sub := newRecorder(t)
	k := runManifests(t, channelManifest("ch", "")+subscriptionManifest("s", "ch", uri(sub.url("/s")), ""))
	url := k.ChannelURL(namespace, "ch")

	// channelAcceptsBinaryContentMode: "It MUST support Binary Content
	// Mode", with three payload media types.
	for _, ct := range []string{"application/vnd.apache.thrift.binary", "application/xml", "application/json"} {
		t.Run("binary mode with "+ct+" is accepted", func(t *testing.T) {
			h := binary("1.0", "ch-binary-"+ct)
			h.Set("Content-Type", ct)
			if resp, _ := post(t, http.MethodPost, url, h, "{}"); resp.StatusCode/100 != 2 {
				t.Fatalf("status %d, want 2xx", resp.StatusCode)
			}
		})
	}
	// channelAcceptsStructuredContentMode.
	t.Run("structured mode is accepted", func(t *testing.T) {
		body := `{"specversion":"1.0","type":"sometype","source":"json.request.sender","id":"ch-structured","datacontenttype":"application/json","data":{"message":"helloworld"}}`
		if resp, _ := post(t, http.MethodPost, url, http.Header{"Content-Type": {"application/cloudevents+json"}}, body); resp.StatusCode/100 != 2 {
			t.Fatalf("status %d, want 2xx", resp.StatusCode)
		}
	})
	// "The Channel MUST respond with 202 Accepted if the event queueing
	// request is accepted by the server."
	t.Run("accepted event gets 202", func(t *testing.T) {
		if resp, _ := post(t, http.MethodPost, url, binary("1.0", "ch-202"), "{}"); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("status %d, want 202", resp.StatusCode)
		}
	})
	// channelRejectsMalformedCE: "If a Channel receives an event queueing
	// request and is unable to parse a valid CloudEvent, then it MUST
	// respond with 400 Bad Request."
	for _, missing := range []string{"Ce-Specversion", "Ce-Type", "Ce-Source", "Ce-Id"} {
		t.Run("missing "+missing+" is rejected with 400", func(t *testing.T) {
			h := binary("1.0", "ch-malformed-"+missing)
			h.Del(missing)
			if resp, _ := post(t, http.MethodPost, url, h, "{}"); resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", resp.StatusCode)
			}
		})
	}
	// "Channels MUST reject all HTTP event queueing requests with a method
	// other than POST responding with HTTP status code 405."
	t.Run("GET is rejected with 405", func(t *testing.T) {
		if resp, _ := post(t, http.MethodGet, url, nil, ""); resp.StatusCode != http.StatusMethodNotAllowed {
			t.Fatalf("status %d, want 405", resp.StatusCode)
		}
	})
	// "If a Channel receives a request that does not correspond to a known
	// channel, then it MUST respond with a 404 Not Found."
	t.Run("unknown channel gets 404", func(t *testing.T) {
		if resp, _ := post(t, http.MethodPost, k.ChannelURL(namespace, "nope"), binary("1.0", "ch-404"), "{}"); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("status %d, want 404", resp.StatusCode)
		}
	})
}

// TestChannelDelivery checks the Output requirements of
// test/rekt/features/channel/data_plane.go: "Channels MUST send events to
// all subscribers", "All CloudEvent attributes, including the data
// attribute, MUST be received at the subscriber identical to how they were
// received by the Channel", and a Subscription's reply going to its reply
// destination (test/rekt/features/channel/topology.go).
func TestChannelDelivery(t *testing.T) {
	sub := newRecorder(t)
	sub.on("/replier", replyEvent("dev.knc.reply", nil))
	k := runManifests(t,
		channelManifest("ch", "")+
			subscriptionManifest("one", "ch", uri(sub.url("/one")), "")+
			subscriptionManifest("two", "ch", uri(sub.url("/two")), "")+
			subscriptionManifest("replying", "ch", uri(sub.url("/replier")), fmt.Sprintf("  reply:\n    uri: %s\n", sub.url("/reply"))))
	h := binary("1.0", "ch-out-1", "Ce-Subject", "s1", "Ce-Time", "2020-07-06T09:23:12Z", "Ce-Myext", "my value")
	h.Set("Content-Type", "application/xml")
	mustAccept(t, k.ChannelURL(namespace, "ch"), h, "<a>b</a>")

	t.Run("every subscriber receives the event unchanged", func(t *testing.T) {
		for _, path := range []string{"/one", "/two", "/replier"} {
			got := sub.awaitID(t, path, "ch-out-1")
			for _, name := range []string{"Ce-Specversion", "Ce-Id", "Ce-Source", "Ce-Type", "Ce-Subject", "Ce-Time", "Ce-Myext", "Content-Type"} {
				if got.Header.Get(name) != h.Get(name) {
					t.Errorf("%s: %s = %q, want %q", path, name, got.Header.Get(name), h.Get(name))
				}
			}
			if string(got.Body) != "<a>b</a>" {
				t.Errorf("%s: data = %q", path, got.Body)
			}
		}
	})
	t.Run("a reply goes to the reply destination", func(t *testing.T) {
		sub.awaitID(t, "/reply", "reply-ch-out-1")
	})
}
