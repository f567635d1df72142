package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/test/rig"
)

func TestIngressAnswers(t *testing.T) {
	sub := newSubscriber(t)
	k := startKnc(t, table(
		[]routing.Broker{broker("b", trig("t", sub.url("/t"), nil))},
		channel("c", routing.Subscription{Source: obj("s"), Subscriber: &routing.Destination{URI: sub.url("/s")}}),
	), "--max-body-bytes", "1024")

	binary := func(url string) *http.Request {
		return event{id: "1", typ: "t", body: []byte(`{"a":1}`), contentType: "application/json"}.request(url)
	}
	structured := func(url, body string) *http.Request {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/cloudevents+json")
		return req
	}
	method := func(m, url string) *http.Request {
		req, _ := http.NewRequest(m, url, nil)
		return req
	}
	tests := []struct {
		name      string
		req       *http.Request
		wantCode  int
		wantAllow string
	}{
		{"binary to broker", binary(k.brokerURL("b")), http.StatusAccepted, ""},
		{"binary to broker, trailing slash", binary(k.brokerURL("b") + "/"), http.StatusAccepted, ""},
		{"binary to channel", binary(k.channelURL("c")), http.StatusAccepted, ""},
		{"structured", structured(k.brokerURL("b"), `{"specversion":"1.0","id":"2","source":"/e2e","type":"t","data":{"a":1}}`), http.StatusAccepted, ""},
		{"structured missing id", structured(k.brokerURL("b"), `{"specversion":"1.0","source":"/e2e","type":"t"}`), http.StatusBadRequest, ""},
		{"structured malformed", structured(k.brokerURL("b"), `{"specversion":`), http.StatusBadRequest, ""},
		{"binary missing type", func() *http.Request { r := binary(k.brokerURL("b")); r.Header.Del("Ce-Type"); return r }(), http.StatusBadRequest, ""},
		{"wrong specversion", func() *http.Request { r := binary(k.brokerURL("b")); r.Header.Set("Ce-Specversion", "9.9"); return r }(), http.StatusBadRequest, ""},
		{"not a cloudevent", func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, k.brokerURL("b"), strings.NewReader("hello"))
			r.Header.Set("Content-Type", "text/plain")
			return r
		}(), http.StatusBadRequest, ""},
		{"too large", event{id: "3", typ: "t", body: bytes.Repeat([]byte("x"), 1025)}.request(k.brokerURL("b")), http.StatusRequestEntityTooLarge, ""},
		{"at the limit", event{id: "4", typ: "t", body: bytes.Repeat([]byte("x"), 1024)}.request(k.brokerURL("b")), http.StatusAccepted, ""},
		{"unknown broker", binary(k.brokerURL("missing")), http.StatusNotFound, ""},
		{"unknown path", binary(k.URL() + "/elsewhere"), http.StatusNotFound, ""},
		{"channel path of a broker", binary(k.channelURL("b")), http.StatusNotFound, ""},
		{"GET", method(http.MethodGet, k.brokerURL("b")), http.StatusMethodNotAllowed, "POST, OPTIONS"},
		{"PUT", method(http.MethodPut, k.channelURL("c")), http.StatusMethodNotAllowed, "POST, OPTIONS"},
		{"OPTIONS", method(http.MethodOptions, k.brokerURL("b")), http.StatusOK, "POST, OPTIONS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := client.Do(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.wantCode)
			}
			if got := resp.Header.Get("Allow"); got != tt.wantAllow {
				t.Errorf("Allow = %q, want %q", got, tt.wantAllow)
			}
		})
	}
	// Accepted events are delivered: 4 to the broker's trigger, 1 to the
	// channel's subscription.
	sub.waitFor(t, "/t", 4)
	sub.waitFor(t, "/s", 1)
	if got := metric(t, k.URL(), "knc_events_accepted_total", map[string]string{"kind": "broker", "name": "b"}); got != 4 {
		t.Errorf("knc_events_accepted_total for broker b = %v, want 4", got)
	}
	if got := metric(t, k.URL(), "knc_ingress_rejected_total", map[string]string{"code": "400"}); got != 5 {
		t.Errorf("knc_ingress_rejected_total{code=400} = %v, want 5", got)
	}
}

// TestIngressFullStoreAnswers503 fills a capped JetStream store while the
// subscriber holds every delivery, and checks that the ingress then answers
// 503 and that every event answered 202 is still delivered once the
// subscriber lets go.
func TestIngressFullStoreAnswers503(t *testing.T) {
	sub := newSubscriber(t)
	release := make(chan struct{})
	sub.on("/slow", func(w http.ResponseWriter, r *http.Request, _ int) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusAccepted)
	})
	k := startKnc(t, table([]routing.Broker{broker("b",
		trig("t", sub.url("/slow"), &routing.Delivery{Retry: 5, BackoffDelay: ms(100), Timeout: routing.Duration(60e9)}))}),
		"--max-store-bytes", fmt.Sprint(256<<10))

	payload := bytes.Repeat([]byte("p"), 4096)
	var accepted []string
	got503 := false
	for i := 0; i < 2000 && !got503; i++ {
		id := fmt.Sprint("e", i)
		switch code := send(t, k.brokerURL("b"), event{id: id, typ: "t", body: payload}); code {
		case http.StatusAccepted:
			accepted = append(accepted, id)
		case http.StatusServiceUnavailable:
			got503 = true
		default:
			t.Fatalf("POST %s = %d, want 202 or 503", id, code)
		}
	}
	if !got503 {
		t.Fatalf("no 503 after %d events of 4 KiB into a 256 KiB store", len(accepted))
	}
	if len(accepted) == 0 {
		t.Fatal("the first event was already refused")
	}
	t.Logf("%d events accepted before the store was full", len(accepted))
	close(release)

	rig.Eventually(t, 60*time.Second, "every accepted event to be delivered", func() bool { return sub.receivedAll("/slow", accepted) })
	// Once the backlog is delivered the store has room again.
	rig.Eventually(t, 20*time.Second, "the ingress to accept events again", func() bool {
		return send(t, k.brokerURL("b"), event{id: "after", typ: "t", body: payload}) == http.StatusAccepted
	})
}

// TestIngressConcurrentPosts checks that concurrent senders all get 202 and
// every event is delivered exactly to the matching Trigger.
func TestIngressConcurrentPosts(t *testing.T) {
	sub := newSubscriber(t)
	k := startKnc(t, table([]routing.Broker{broker("b", trig("t", sub.url("/t"), nil))}))
	const senders, each = 8, 50
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				mustSend(t, k.brokerURL("b"), event{id: fmt.Sprintf("%d-%d", s, i), typ: "t", body: []byte("x")})
			}
		}()
	}
	wg.Wait()
	reqs := sub.waitFor(t, "/t", senders*each)
	seen := map[string]int{}
	for _, r := range reqs {
		seen[r.ID()]++
	}
	if len(seen) != senders*each {
		t.Errorf("%d distinct events delivered, want %d", len(seen), senders*each)
	}
	rig.Eventually(t, 10*time.Second, "every delivery in the latency histogram", func() bool {
		return metric(t, k.URL(), "knc_delivery_latency_seconds_count", map[string]string{"name": "b"}) == senders*each
	})
	if got := metric(t, k.URL(), "knc_events_delivered_total", map[string]string{"namespace": "e2e", "kind": "broker", "name": "b"}); got != senders*each {
		t.Errorf("knc_events_delivered_total = %v, want %d", got, senders*each)
	}
}
