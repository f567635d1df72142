package engine

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/internal/routing"
)

// TestReloadUnderLoad swaps tables while events keep coming: every event
// accepted is delivered to the Trigger that exists throughout, and the
// Trigger added by the reload gets every event accepted after it.
func TestReloadUnderLoad(t *testing.T) {
	a := newRecorder(t)
	b := newRecorder(t)
	first := brokerTable(trigger("a", a.srv.URL, nil))
	e := startEngine(t, Options{Table: first})

	var (
		mu          sync.Mutex
		accepted    []string
		afterReload []string
		reloaded    atomic.Bool
		next        atomic.Int64
		stop        = make(chan struct{})
		wg          sync.WaitGroup
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Read the flag before sending: an event counts as sent
				// after the reload only if it started after Reload returned.
				after := reloaded.Load()
				id := fmt.Sprint("e", next.Add(1))
				if post(t, e.URL()+"/brokers/ns/b", id, "t") != http.StatusAccepted {
					t.Errorf("event %s refused during reload", id)
					return
				}
				mu.Lock()
				accepted = append(accepted, id)
				if after {
					afterReload = append(afterReload, id)
				}
				mu.Unlock()
			}
		}()
	}
	eventually(t, 10*time.Second, "load before the reload", func() bool { return a.count() >= 100 })
	second := brokerTable(trigger("a", a.srv.URL, nil), trigger("b", b.srv.URL, nil))
	second.Channels = []routing.Channel{{Source: routing.Source{Namespace: "ns", Name: "c"}, Path: routing.ChannelPath("ns", "c")}}
	if err := e.Reload(context.Background(), second); err != nil {
		t.Fatal(err)
	}
	reloaded.Store(true)
	eventually(t, 10*time.Second, "load after the reload", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(afterReload) >= 100
	})
	close(stop)
	wg.Wait()

	delivered := func(r *recorder, want []string) func() bool {
		return func() bool {
			seen := map[string]bool{}
			for _, id := range r.ids() {
				seen[id] = true
			}
			for _, id := range want {
				if !seen[id] {
					return false
				}
			}
			return true
		}
	}
	eventually(t, 20*time.Second, fmt.Sprintf("all %d accepted events at trigger a", len(accepted)), delivered(a, accepted))
	eventually(t, 20*time.Second, fmt.Sprintf("the %d events accepted after the reload at trigger b", len(afterReload)), delivered(b, afterReload))
	if code := post(t, e.URL()+"/channels/ns/c", "to-channel", "t"); code != http.StatusAccepted {
		t.Errorf("POST to the channel added by the reload = %d, want 202", code)
	}

	// Dropping the Broker stops serving it.
	if err := e.Reload(context.Background(), &routing.Table{Channels: second.Channels}); err != nil {
		t.Fatal(err)
	}
	if code := post(t, e.URL()+"/brokers/ns/b", "late", "t"); code != http.StatusNotFound {
		t.Errorf("POST to a removed broker = %d, want 404", code)
	}
}

func TestReloadRejectsInvalidTable(t *testing.T) {
	a := newRecorder(t)
	e := startEngine(t, Options{Table: brokerTable(trigger("a", a.srv.URL, nil))})
	bad := brokerTable(routing.Trigger{Source: routing.Source{Namespace: "ns", Name: "x"},
		Subscriber: routing.Destination{URI: a.srv.URL},
		Filters:    []routing.Filter{{CESQL: "type ="}}})
	if err := e.Reload(context.Background(), bad); err == nil {
		t.Fatal("Reload accepted a table whose CESQL does not parse")
	}
	if code := post(t, e.URL()+"/brokers/ns/b", "still", "t"); code != http.StatusAccepted {
		t.Fatalf("POST after a failed reload = %d, want 202", code)
	}
	eventually(t, 10*time.Second, "delivery under the previous table", func() bool { return a.count() == 1 })
}

// TestOneConsumerPerBroker checks that a Broker with a thousand Triggers
// costs three consumers, not a thousand, and still delivers to each match.
func TestOneConsumerPerBroker(t *testing.T) {
	sub := newRecorder(t)
	var triggers []routing.Trigger
	for i := range 1000 {
		triggers = append(triggers, trigger(fmt.Sprint("t", i), sub.srv.URL, map[string]string{"type": fmt.Sprint("type", i%500)}))
	}
	e := startEngine(t, Options{Table: brokerTable(triggers...), NATSAddr: "127.0.0.1:0"})
	if code := post(t, e.URL()+"/brokers/ns/b", "one", "type7"); code != http.StatusAccepted {
		t.Fatalf("POST = %d", code)
	}
	// type7 matches t7 and t507.
	eventually(t, 10*time.Second, "two deliveries", func() bool { return sub.count() == 2 })

	nc, err := nats.Connect(e.NATSURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	streams := js.StreamNames(ctx)
	total := 0
	for name := range streams.Name() {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		lister := s.ConsumerNames(ctx)
		for range lister.Name() {
			total++
		}
	}
	if total != 3 {
		t.Errorf("%d consumers for one broker with 1000 triggers, want 3 (route, dispatch, unpark)", total)
	}
}

// TestLongAttemptKeepsItsClaim checks that an attempt longer than AckWait is
// not delivered a second time while it is still running.
func TestLongAttemptKeepsItsClaim(t *testing.T) {
	sub := newRecorder(t)
	sub.respond = func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			select {
			case <-time.After(2500 * time.Millisecond):
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(http.StatusAccepted)
	}
	tr := trigger("slow", sub.srv.URL, nil)
	tr.Delivery = &routing.Delivery{Timeout: routing.Duration(10 * time.Second), Retry: 3}
	e := startEngine(t, Options{Table: brokerTable(tr), AckWait: time.Second})
	if code := post(t, e.URL()+"/brokers/ns/b", "slow", "t"); code != http.StatusAccepted {
		t.Fatalf("POST = %d", code)
	}
	eventually(t, 10*time.Second, "the slow delivery to complete", func() bool {
		return testutilCounter(e, "knc_events_delivered_total") == 1
	})
	if n := sub.count(); n != 1 {
		t.Errorf("%d attempts, want 1: the message was redelivered while its attempt ran", n)
	}
}
