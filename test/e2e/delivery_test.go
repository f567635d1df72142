package e2e

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/knc-dev/knc/internal/routing"
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

// The bounds of a measured wait before a retry. They are lopsided because
// the two ways of missing the expected wait mean different things.
//
// Early is a bug: the runtime starts a wait only after it has the failed
// attempt's answer, which the subscriber gives after stamping the request,
// so the next request cannot arrive sooner than the wait after the stamp.
// The lower bound is therefore the wait itself, less clockSlack, because
// the runtime dates retries by the wall clock (its Knc-Not-Before header,
// JetStream's redelivery timestamps) while the stamps read the monotonic
// one. A loaded machine makes no retry early, so this bound stays tight.
//
// Late is what a loaded machine does: knc, its embedded NATS server and
// the subscriber wait for cores that other test suites keep busy, and each
// may be scheduled hundreds of milliseconds late. The upper bound
// allows lateAllowance. It still tells the policies apart because
// TestBackoff's linear delay is more than half of it: a linear policy that
// grew like Knative's (delay × n) or doubled would make its third wait at
// least three times the delay, past the bound.
const (
	clockSlack    = 5 * time.Millisecond
	lateAllowance = time.Second
)

// checkGaps compares measured waits with the expected ones.
func checkGaps(t *testing.T, got, want []time.Duration) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d gaps %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range want {
		lo, hi := want[i]-clockSlack, want[i]+lateAllowance
		if got[i] < lo || got[i] > hi {
			t.Errorf("wait before retry %d = %v, want between %v and %v (all: %v)", i+1, got[i], lo, hi, got)
		}
	}
}

// retryAfterOnce answers the first request with code and a Retry-After of
// seconds, and accepts the others.
func retryAfterOnce(code int, seconds string) handler {
	return func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Retry-After", seconds)
			w.WriteHeader(code)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}
}

// TestBackoff checks the waits before retries. The lower bounds tell the
// exponential policy from the linear one (its second wait is twice the
// first); the upper bounds tell the linear one from a growing one (see
// lateAllowance).
func TestBackoff(t *testing.T) {
	tests := []struct {
		name     string // of the Broker and the subscriber's path
		answer   handler
		delivery *routing.Delivery
		want     []time.Duration // the waits before each retry
	}{{
		name:     "linear",
		answer:   status(http.StatusInternalServerError),
		delivery: &routing.Delivery{Retry: 3, BackoffPolicy: routing.BackoffLinear, BackoffDelay: ms(600)},
		want:     []time.Duration{600 * time.Millisecond, 600 * time.Millisecond, 600 * time.Millisecond},
	}, {
		name:     "exponential",
		answer:   status(http.StatusInternalServerError),
		delivery: &routing.Delivery{Retry: 3, BackoffPolicy: routing.BackoffExponential, BackoffDelay: ms(150)},
		want:     []time.Duration{150 * time.Millisecond, 300 * time.Millisecond, 600 * time.Millisecond},
	}, {
		name:     "retry-after",
		answer:   retryAfterOnce(http.StatusTooManyRequests, "1"),
		delivery: &routing.Delivery{Retry: 1, BackoffDelay: ms(10)},
		want:     []time.Duration{time.Second},
	}, {
		name:     "retry-after-capped",
		answer:   retryAfterOnce(http.StatusServiceUnavailable, "30"),
		delivery: &routing.Delivery{Retry: 1, BackoffDelay: ms(10), RetryAfterMax: ms(300)},
		want:     []time.Duration{300 * time.Millisecond},
	}}
	sub := newSubscriber(t)
	var brokers []routing.Broker
	for _, tt := range tests {
		sub.on("/"+tt.name, tt.answer)
		brokers = append(brokers, broker(tt.name, trig("t-"+tt.name, sub.url("/"+tt.name), tt.delivery)))
	}
	k := startKnc(t, table(brokers))
	for _, tt := range tests {
		mustSend(t, k.brokerURL(tt.name), event{id: tt.name, typ: "t"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGaps(t, gaps(sub.waitFor(t, "/"+tt.name, len(tt.want)+1)), tt.want)
		})
	}
	// No attempt beyond retry: 3 retries then the event is kept (no sink).
	rig.Eventually(t, 10*time.Second, "the linear and exponential events to be kept", func() bool {
		return metric(t, k.URL(), "knc_events_kept_total", map[string]string{"reason": "no-dead-letter-sink"}) == 2
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
	cut := make(chan bool, 1)
	sub.on("/slow-once", func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			// Hold the first attempt until the runtime gives up on it.
			select {
			case <-r.Context().Done():
				cut <- true
			case <-time.After(10 * time.Second):
				cut <- false
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
	if !<-cut {
		t.Fatal("the runtime did not cut the first attempt at its timeout")
	}
	// The second attempt starts after the timeout and the backoff, 350 ms
	// after the runtime sent the first one. Unlike checkGaps' waits, this
	// one starts before the subscriber stamps the first request, so the
	// gap between the stamps may be short by that request's travel time
	// (a new connection on a loaded machine). The lower bound is the
	// timeout alone: a retry sooner than that did not wait for it.
	gap := gaps(reqs)[0]
	if lo, hi := 300*time.Millisecond, 350*time.Millisecond+lateAllowance; gap < lo || gap > hi {
		t.Errorf("second attempt %v after the first, want between %v and %v", gap, lo, hi)
	}
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
	rig.Eventually(t, 10*time.Second, "the event whose sink is down to be kept", func() bool {
		return metric(t, k.URL(), "knc_events_kept_total", map[string]string{"name": "down", "reason": "dead-letter-failed"}) == 1
	})
	if got := len(dls.requests("/down")); got != 3 {
		t.Errorf("attempts at the failing sink = %d, want 3", got)
	}
	if got := metric(t, k.URL(), "knc_events_dead_lettered_total", map[string]string{"name": "flaky"}); got != 1 {
		t.Errorf("knc_events_dead_lettered_total for flaky = %v, want 1", got)
	}
}

func TestNoSinkKeepIsCounted(t *testing.T) {
	sub := newSubscriber(t)
	sub.on("/reject", status(http.StatusUnprocessableEntity))
	k := startKnc(t, table([]routing.Broker{broker("b", trig("t", sub.url("/reject"), &routing.Delivery{Retry: 3}))}))
	for i := range 3 {
		mustSend(t, k.brokerURL("b"), event{id: fmt.Sprint(i), typ: "t"})
	}
	rig.Eventually(t, 10*time.Second, "three kept letters to be counted", func() bool {
		return metric(t, k.URL(), "knc_events_kept_total",
			map[string]string{"namespace": "e2e", "kind": "broker", "name": "b", "reason": "no-dead-letter-sink"}) == 3
	})
	if got := len(sub.requests("/reject")); got != 3 {
		t.Errorf("attempts = %d, want 3 (a 422 is not retried)", got)
	}
}
