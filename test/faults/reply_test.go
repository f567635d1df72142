package faults

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/test/rig"
)

// countingServer answers every request with answer and counts the requests
// per CloudEvent id, and those it answered with a 2xx.
type countingServer struct {
	srv    *httptest.Server
	answer atomic.Pointer[func(w http.ResponseWriter, id string) int]

	mu       sync.Mutex
	requests map[string]int
	ok       map[string]int
}

func newCountingServer(t *testing.T, answer func(w http.ResponseWriter, id string) int) *countingServer {
	s := &countingServer{requests: map[string]int{}, ok: map[string]int{}}
	s.answer.Store(&answer)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		id := r.Header.Get("Ce-Id")
		code := (*s.answer.Load())(w, id)
		s.mu.Lock()
		s.requests[id]++
		if code >= 200 && code < 300 {
			s.ok[id]++
		}
		s.mu.Unlock()
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *countingServer) set(answer func(w http.ResponseWriter, id string) int) {
	s.answer.Store(&answer)
}

func (s *countingServer) counts() (requests, ok map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	requests, ok = map[string]int{}, map[string]int{}
	for id, n := range s.requests {
		requests[id] = n
	}
	for id, n := range s.ok {
		ok[id] = n
	}
	return requests, ok
}

// replyTo answers 200 with a reply event whose id is "reply-" and the id of
// the event it answers.
func replyTo(w http.ResponseWriter, id string) int {
	h := w.Header()
	h.Set("Ce-Specversion", "1.0")
	h.Set("Ce-Id", "reply-"+id)
	h.Set("Ce-Source", "/replier")
	h.Set("Ce-Type", "dev.knc.reply")
	h.Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "reply")
	return http.StatusOK
}

func unavailable(w http.ResponseWriter, _ string) int {
	w.WriteHeader(http.StatusServiceUnavailable)
	return http.StatusServiceUnavailable
}

func accept(w http.ResponseWriter, _ string) int {
	w.WriteHeader(http.StatusAccepted)
	return http.StatusAccepted
}

// TestSIGKILLWhileReplyRetried kills the runtime with SIGKILL while the
// replies of a Subscription are being retried: its subscriber has answered
// every event with a reply, and the reply destination answers 503. The
// reply destination recovers while the runtime is down. After the restart
// every reply must arrive: the retries of a reply wait inside the attempt,
// and the delivery is acknowledged only once the reply is delivered, so the
// delivery is made again, the subscriber answers again, and the new reply
// is sent.
func TestSIGKILLWhileReplyRetried(t *testing.T) {
	const events = 20
	replier := newCountingServer(t, replyTo)
	replyDest := newCountingServer(t, unavailable)
	retrying := rig.Retrying(1000, 50*time.Millisecond, time.Second, "")
	table := &routing.Table{APIVersion: routing.APIVersion, Kind: routing.Kind, Channels: []routing.Channel{{
		Source: routing.Source{Namespace: rig.Namespace, Name: "ch"},
		Path:   routing.ChannelPath(rig.Namespace, "ch"),
		Subscriptions: []routing.Subscription{{
			Source:     routing.Source{Namespace: rig.Namespace, Name: "s"},
			Subscriber: &routing.Destination{URI: replier.srv.URL + "/"},
			Reply:      &routing.Destination{URI: replyDest.srv.URL + "/"},
			Delivery:   retrying,
		}},
	}}}
	k := rig.StartKnc(t, kncBinary, table)

	var ids []string
	for i := range events {
		id := fmt.Sprintf("reply-kill-%d", i)
		if code := postEvent(t, k.ChannelURL(rig.Namespace, "ch"), id); code != http.StatusAccepted {
			t.Fatalf("%s: %d, want 202", id, code)
		}
		ids = append(ids, id)
	}
	// Every reply has failed at least twice: each is inside its retries.
	rig.Eventually(t, 30*time.Second, "every reply to be refused twice", func() bool {
		requests, _ := replyDest.counts()
		for _, id := range ids {
			if requests["reply-"+id] < 2 {
				return false
			}
		}
		return true
	})
	before, _ := replier.counts()
	k.Kill()
	replyDest.set(accept)
	k.Start()

	rig.Eventually(t, 60*time.Second, "every reply to be delivered after the restart", func() bool {
		_, ok := replyDest.counts()
		for _, id := range ids {
			if ok["reply-"+id] == 0 {
				return false
			}
		}
		return true
	})
	var a rig.Accounting
	rig.Eventually(t, 30*time.Second, "the accounting of s to balance", func() bool {
		var err error
		a, err = rig.ReadAccounting(k.URL(), "s")
		return err == nil && a.Balanced() && a.Delivered >= events
	})
	t.Logf("accounting after the restart: %s", a)
	if a.Dropped != 0 || a.DeadLettered != 0 {
		t.Errorf("after the restart: %v dropped and %v dead-lettered, want every delivery delivered", a.Dropped, a.DeadLettered)
	}
	after, _ := replier.counts()
	_, delivered := replyDest.counts()
	again, duplicates := 0, 0
	for _, id := range ids {
		if before[id] == 0 {
			t.Errorf("event %s had not reached the subscriber before the kill", id)
		}
		if after[id] > before[id] {
			again++
		}
		duplicates += max(delivered["reply-"+id]-1, 0)
	}
	t.Logf("replies delivered more than once: %d", duplicates)
	// What the test shows about where the reply was kept: had it been
	// stored before the kill, the subscriber would not be called again.
	t.Logf("subscriber called again after the restart for %d of %d events", again, events)
	if again != events {
		t.Errorf("subscriber called again for %d of %d events; each reply was lost with the process, so each delivery must be made again", again, events)
	}
}
