package e2e

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/knc-dev/knc/runtime/routing"
	"github.com/knc-dev/knc/test/rig"
)

// TestResponseCodes checks the data-plane response table: which answers are
// retried (retry: 2, so three attempts) and which are final, and that every
// failure ends at the dead-letter sink with the last status code.
func TestResponseCodes(t *testing.T) {
	sub := newSubscriber(t)
	dls := newSubscriber(t)
	type tc struct {
		name      string
		code      int // 0: nothing listens
		attempts  int
		deadCode  string // knativeerrorcode at the sink; "" when delivered
		retryable bool
	}
	var cases []tc
	for _, code := range []int{200, 201, 202, 204} {
		cases = append(cases, tc{name: fmt.Sprint(code), code: code, attempts: 1})
	}
	for _, code := range []int{300, 302, 400, 401, 403, 405, 410, 413, 415, 422} {
		cases = append(cases, tc{name: fmt.Sprint(code), code: code, attempts: 1, deadCode: fmt.Sprint(code)})
	}
	for _, code := range []int{404, 408, 409, 429, 500, 501, 502, 503, 504} {
		cases = append(cases, tc{name: fmt.Sprint(code), code: code, attempts: 3, deadCode: fmt.Sprint(code), retryable: true})
	}
	cases = append(cases, tc{name: "connection-refused", attempts: 3, deadCode: "500", retryable: true})

	var brokers []routing.Broker
	refused := closedPort(t)
	for _, c := range cases {
		path := "/code/" + c.name
		target := sub.url(path)
		if c.code == 0 {
			target = refused
		} else {
			code := c.code
			sub.on(path, func(w http.ResponseWriter, _ *http.Request, _ int) {
				if code >= 300 && code < 400 {
					// A redirect that a client following it would take.
					w.Header().Set("Location", sub.url("/redirected"))
				}
				w.WriteHeader(code)
				if code >= 300 {
					fmt.Fprintf(w, "answer %d", code)
				}
			})
		}
		brokers = append(brokers, broker("b"+c.name, trig("t"+c.name, target, &routing.Delivery{
			Retry: 2, BackoffPolicy: routing.BackoffLinear, BackoffDelay: ms(20),
			DeadLetterSink: &routing.Destination{URI: dls.url("/dls/" + c.name)},
		})))
	}
	k := startKnc(t, table(brokers))
	payload := []byte{0x00, 0xff, 0x10, 'p', 'a', 'y'}
	for _, c := range cases {
		mustSend(t, k.brokerURL("b"+c.name), event{id: "ev-" + c.name, typ: "t", body: payload, contentType: "application/octet-stream"})
	}
	// Wait for every dead letter first: failures take longest, so once they
	// are in, successes would have shown any extra attempt too.
	for _, c := range cases {
		if c.deadCode != "" {
			dls.waitFor(t, "/dls/"+c.name, 1)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.code != 0 {
				if got := len(sub.requests("/code/" + c.name)); got != c.attempts {
					t.Errorf("attempts = %d, want %d", got, c.attempts)
				}
			}
			dead := dls.requests("/dls/" + c.name)
			if c.deadCode == "" {
				if len(dead) != 0 {
					t.Errorf("%d events at the dead-letter sink, want none", len(dead))
				}
				return
			}
			if len(dead) != 1 {
				t.Fatalf("%d events at the dead-letter sink, want 1", len(dead))
			}
			d := dead[0]
			if got := d.Header.Get("Ce-Knativeerrorcode"); got != c.deadCode {
				t.Errorf("knativeerrorcode = %q, want %q", got, c.deadCode)
			}
			wantDest := sub.url("/code/" + c.name)
			if c.code == 0 {
				wantDest = refused
			}
			if got := d.Header.Get("Ce-Knativeerrordest"); got != wantDest {
				t.Errorf("knativeerrordest = %q, want %q", got, wantDest)
			}
			data, err := base64.StdEncoding.DecodeString(d.Header.Get("Ce-Knativeerrordata"))
			if err != nil {
				t.Errorf("knativeerrordata is not base64: %v", err)
			}
			wantData := fmt.Sprintf("answer %d", c.code)
			if c.code == 0 {
				wantData = "dispatch error: "
			}
			if c.code == 0 && len(data) > len(wantData) {
				data = data[:len(wantData)]
			}
			if string(data) != wantData {
				t.Errorf("knativeerrordata = %q, want %q", data, wantData)
			}
			if d.ID() != "ev-"+c.name || string(d.Body) != string(payload) {
				t.Errorf("dead letter is event %q with body %q, want the original %q with %q", d.ID(), d.Body, "ev-"+c.name, payload)
			}
		})
	}
	if got := len(sub.requests("/redirected")); got != 0 {
		t.Errorf("%d redirects were followed, want none", got)
	}
	if got := metric(t, k.URL(), "knc_events_dead_lettered_total", nil); got != 20 {
		t.Errorf("knc_events_dead_lettered_total = %v, want 20", got)
	}
}

// gaps returns the time between consecutive requests.
func gaps(reqs []request) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(reqs); i++ {
		out = append(out, reqs[i].At.Sub(reqs[i-1].At))
	}
	return out
}

// checkGaps compares measured waits with the expected ones: never shorter,
// and longer by at most the 25% jitter allowance plus slack for a busy
// machine.
func checkGaps(t *testing.T, got, want []time.Duration, slack time.Duration) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d gaps %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range want {
		lo := want[i] - 5*time.Millisecond // timer granularity
		hi := want[i] + want[i]/4 + slack
		if got[i] < lo || got[i] > hi {
			t.Errorf("wait before retry %d = %v, want between %v and %v (all: %v)", i+1, got[i], lo, hi, got)
		}
	}
}

func TestBackoff(t *testing.T) {
	sub := newSubscriber(t)
	sub.on("/linear", status(http.StatusInternalServerError))
	sub.on("/exponential", status(http.StatusInternalServerError))
	sub.on("/retry-after", func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	sub.on("/retry-after-capped", func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	k := startKnc(t, table([]routing.Broker{
		broker("linear", trig("t-linear", sub.url("/linear"), &routing.Delivery{Retry: 3, BackoffPolicy: routing.BackoffLinear, BackoffDelay: ms(300)})),
		broker("exponential", trig("t-exponential", sub.url("/exponential"), &routing.Delivery{Retry: 3, BackoffPolicy: routing.BackoffExponential, BackoffDelay: ms(150)})),
		broker("retryafter", trig("t-retryafter", sub.url("/retry-after"), &routing.Delivery{Retry: 1, BackoffDelay: ms(10)})),
		broker("capped", trig("t-capped", sub.url("/retry-after-capped"), &routing.Delivery{Retry: 1, BackoffDelay: ms(10), RetryAfterMax: ms(300)})),
	}))
	for _, b := range []string{"linear", "exponential", "retryafter", "capped"} {
		mustSend(t, k.brokerURL(b), event{id: b, typ: "t"})
	}
	// The lower bounds tell the policies apart (the third linear wait is
	// 300ms, the third exponential one 600ms); the upper bounds allow for a
	// loaded machine.
	const slack = 400 * time.Millisecond
	t.Run("linear", func(t *testing.T) {
		checkGaps(t, gaps(sub.waitFor(t, "/linear", 4)), []time.Duration{300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond}, slack)
	})
	t.Run("exponential", func(t *testing.T) {
		checkGaps(t, gaps(sub.waitFor(t, "/exponential", 4)), []time.Duration{150 * time.Millisecond, 300 * time.Millisecond, 600 * time.Millisecond}, slack)
	})
	t.Run("retry-after", func(t *testing.T) {
		checkGaps(t, gaps(sub.waitFor(t, "/retry-after", 2)), []time.Duration{time.Second}, slack)
	})
	t.Run("retry-after capped by retryAfterMax", func(t *testing.T) {
		checkGaps(t, gaps(sub.waitFor(t, "/retry-after-capped", 2)), []time.Duration{300 * time.Millisecond}, slack)
	})
	// No attempt beyond retry: 3 retries then the event is dropped (no sink).
	rig.Eventually(t, 10*time.Second, "the linear and exponential events to be dropped", func() bool {
		return metric(t, k.URL(), "knc_events_dropped_total", map[string]string{"reason": "no-dead-letter-sink"}) == 2
	})
	for _, p := range []string{"/linear", "/exponential"} {
		if got := len(sub.requests(p)); got != 4 {
			t.Errorf("%s: %d attempts, want 4", p, got)
		}
	}
	if got := metric(t, k.URL(), "knc_delivery_retries_total", map[string]string{"name": "linear"}); got != 3 {
		t.Errorf("knc_delivery_retries_total for linear = %v, want 3", got)
	}
}

func TestAttemptTimeout(t *testing.T) {
	sub := newSubscriber(t)
	sub.on("/slow-once", func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			// Hold the first attempt until the runtime gives up on it.
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	dls := newSubscriber(t)
	k := startKnc(t, table([]routing.Broker{broker("b", trig("t", sub.url("/slow-once"), &routing.Delivery{
		Retry: 1, BackoffPolicy: routing.BackoffLinear, BackoffDelay: ms(50), Timeout: ms(300),
		DeadLetterSink: &routing.Destination{URI: dls.url("/dls")},
	}))}))
	mustSend(t, k.brokerURL("b"), event{id: "slow", typ: "t"})
	reqs := sub.waitFor(t, "/slow-once", 2)
	// The second attempt starts after the timeout and the backoff.
	checkGaps(t, gaps(reqs), []time.Duration{350 * time.Millisecond}, 400*time.Millisecond)
	rig.Eventually(t, 10*time.Second, "the delivery to count", func() bool {
		return metric(t, k.URL(), "knc_events_delivered_total", map[string]string{"name": "b"}) == 1
	})
	if n := len(dls.requests("/dls")); n != 0 {
		t.Errorf("%d dead letters, want none", n)
	}
}

// TestDeadLetterSinkRetried checks that delivery to the dead-letter sink is
// retried like the delivery itself, and that an event is dropped and
// counted when the sink also fails.
func TestDeadLetterSinkRetried(t *testing.T) {
	sub := newSubscriber(t)
	sub.on("/fail", status(http.StatusBadRequest))
	dls := newSubscriber(t)
	dls.on("/flaky", func(w http.ResponseWriter, _ *http.Request, n int) {
		if n < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	dls.on("/down", status(http.StatusInternalServerError))
	d := func(sink string) *routing.Delivery {
		return &routing.Delivery{Retry: 2, BackoffPolicy: routing.BackoffLinear, BackoffDelay: ms(20), DeadLetterSink: &routing.Destination{URI: dls.url(sink)}}
	}
	k := startKnc(t, table([]routing.Broker{
		broker("flaky", trig("t-flaky", sub.url("/fail"), d("/flaky"))),
		broker("down", trig("t-down", sub.url("/fail"), d("/down"))),
	}))
	mustSend(t, k.brokerURL("flaky"), event{id: "1", typ: "t"})
	mustSend(t, k.brokerURL("down"), event{id: "2", typ: "t"})
	dls.waitFor(t, "/flaky", 3)
	rig.Eventually(t, 10*time.Second, "the event whose sink is down to be dropped", func() bool {
		return metric(t, k.URL(), "knc_events_dropped_total", map[string]string{"name": "down", "reason": "dead-letter-failed"}) == 1
	})
	if got := len(dls.requests("/down")); got != 3 {
		t.Errorf("attempts at the failing sink = %d, want 3", got)
	}
	if got := metric(t, k.URL(), "knc_events_dead_lettered_total", map[string]string{"name": "flaky"}); got != 1 {
		t.Errorf("knc_events_dead_lettered_total for flaky = %v, want 1", got)
	}
}

func TestNoSinkDropIsCounted(t *testing.T) {
	sub := newSubscriber(t)
	sub.on("/reject", status(http.StatusUnprocessableEntity))
	k := startKnc(t, table([]routing.Broker{broker("b", trig("t", sub.url("/reject"), &routing.Delivery{Retry: 3}))}))
	for i := range 3 {
		mustSend(t, k.brokerURL("b"), event{id: fmt.Sprint(i), typ: "t"})
	}
	rig.Eventually(t, 10*time.Second, "three drops to be counted", func() bool {
		return metric(t, k.URL(), "knc_events_dropped_total",
			map[string]string{"namespace": "e2e", "kind": "broker", "name": "b", "reason": "no-dead-letter-sink"}) == 3
	})
	if got := len(sub.requests("/reject")); got != 3 {
		t.Errorf("attempts = %d, want 3 (a 422 is not retried)", got)
	}
}
