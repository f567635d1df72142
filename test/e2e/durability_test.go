package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/test/rig"
)

// load posts events from several goroutines until stopped and records the
// ids answered 202. Requests that fail (the process is gone) are not
// recorded: only a 2xx promises delivery.
type load struct {
	mu       sync.Mutex
	accepted []string
	next     atomic.Int64
	stop     chan struct{}
	wg       sync.WaitGroup
}

func startLoad(t *testing.T, url string, senders int, l *load) *load {
	if l == nil {
		l = &load{}
	}
	l.stop = make(chan struct{})
	for range senders {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				id := fmt.Sprint("ev-", l.next.Add(1))
				resp, err := client.Do(event{id: id, typ: "load", body: []byte(id)}.request(url))
				if err != nil {
					continue
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusAccepted {
					l.mu.Lock()
					l.accepted = append(l.accepted, id)
					l.mu.Unlock()
				}
			}
		}()
	}
	return l
}

func (l *load) halt() {
	close(l.stop)
	l.wg.Wait()
}

func (l *load) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.accepted)
}

func TestSIGTERMDuringLoadLosesNothing(t *testing.T) { testInterruptedLoad(t, false) }
func TestSIGKILLDuringLoadLosesNothing(t *testing.T) { testInterruptedLoad(t, true) }

func testInterruptedLoad(t *testing.T, crash bool) {
	sub := newSubscriber(t)
	// A subscriber slower than the ingress, so that a backlog is stored
	// when the runtime goes down.
	gate := make(chan struct{}, 2)
	sub.on("/slow", func(w http.ResponseWriter, _ *http.Request, _ int) {
		gate <- struct{}{}
		time.Sleep(5 * time.Millisecond)
		<-gate
		w.WriteHeader(http.StatusAccepted)
	})
	k := startKnc(t, table([]routing.Broker{broker("load",
		trig("t-load", sub.url("/slow"), &routing.Delivery{Retry: 10, BackoffDelay: ms(50)}))}))

	l := startLoad(t, k.brokerURL("load"), 8, nil)
	rig.Eventually(t, 30*time.Second, "500 accepted events", func() bool { return l.count() >= 500 })
	if crash {
		k.Kill()
	} else {
		took := k.Terminate()
		if k.ExitErr() != nil {
			t.Errorf("knc exited with %v after SIGTERM, want status 0", k.ExitErr())
		}
		if took > 11*time.Second {
			t.Errorf("knc took %v to exit after SIGTERM, want at most 10s", took)
		}
	}
	l.halt()
	atStop := l.count()
	delivered := len(sub.requests("/slow"))
	t.Logf("%d events accepted, %d delivered when knc stopped", atStop, delivered)
	if delivered >= atStop {
		t.Fatalf("no backlog when knc stopped (%d accepted, %d delivered): the test proves nothing", atStop, delivered)
	}

	k.Start()
	l = startLoad(t, k.brokerURL("load"), 4, l)
	rig.Eventually(t, 30*time.Second, "100 more accepted events", func() bool { return l.count() >= atStop+100 })
	l.halt()

	accepted := l.accepted
	rig.Eventually(t, 90*time.Second, fmt.Sprintf("all %d accepted events to be delivered", len(accepted)), func() bool { return sub.receivedAll("/slow", accepted) })
	counts := map[string]int{}
	for _, r := range sub.requests("/slow") {
		counts[r.ID()]++
	}
	duplicates := 0
	for _, n := range counts {
		duplicates += n - 1
	}
	t.Logf("%d accepted events delivered, %d duplicate deliveries", len(accepted), duplicates)
}

// TestSIGTERMAbandonsHangingDelivery checks that the drain is bounded: a
// subscriber that never answers does not keep knc from exiting with status 0
// within --shutdown-timeout, and the abandoned event is delivered after a
// restart.
func TestSIGTERMAbandonsHangingDelivery(t *testing.T) {
	sub := newSubscriber(t)
	sub.on("/hang", func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			select {
			case <-r.Context().Done():
			case <-time.After(60 * time.Second):
			}
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	k := startKnc(t, table([]routing.Broker{broker("b",
		trig("t-hang", sub.url("/hang"), &routing.Delivery{Timeout: routing.Duration(60 * time.Second)}))}),
		"--shutdown-timeout", "2s")
	mustSend(t, k.brokerURL("b"), event{id: "stuck", typ: "t"})
	sub.waitFor(t, "/hang", 1)
	took := k.Terminate()
	if k.ExitErr() != nil {
		t.Errorf("knc exited with %v, want status 0", k.ExitErr())
	}
	if took > 4*time.Second {
		t.Errorf("knc took %v to exit with --shutdown-timeout 2s", took)
	}
	k.Start()
	got := sub.waitFor(t, "/hang", 2)
	if got[1].ID() != "stuck" {
		t.Errorf("after restart /hang got %q, want the abandoned event", got[1].ID())
	}
}
