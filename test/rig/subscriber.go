package rig

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Answer is how a subscriber answers one request.
type Answer int

const (
	// Accept answers 202: the only answer that counts as delivered.
	Accept Answer = iota
	// Fail answers 500, a retryable error.
	Fail
	// Overloaded answers 429 with Retry-After: 1.
	Overloaded
	// Hang never answers; the sender's timeout ends the attempt.
	Hang
	// Reset closes the connection without an answer (a TCP reset).
	Reset
	// Reject answers 400, which is not retried.
	Reject
)

func (a Answer) String() string {
	return [...]string{"accept", "fail", "overloaded", "hang", "reset", "reject"}[a]
}

// Behaviour decides the answer to a request for event id; attempt counts
// the requests for that id so far, from 1.
type Behaviour func(id string, attempt int) Answer

// Always answers a the same way every time.
func Always(a Answer) Behaviour { return func(string, int) Answer { return a } }

// Flaky answers each request with one of the answers, at random, with
// the weights given; the same seed gives the same sequence of choices.
func Flaky(seed uint64, weights map[Answer]int) Behaviour {
	var (
		mu      sync.Mutex
		rng     = rand.New(rand.NewPCG(seed, seed))
		answers []Answer
	)
	for a := Accept; a <= Reject; a++ {
		for range weights[a] {
			answers = append(answers, a)
		}
	}
	return func(string, int) Answer {
		mu.Lock()
		defer mu.Unlock()
		return answers[rng.IntN(len(answers))]
	}
}

// Subscriber is an HTTP server on loopback that answers per its Behaviour
// and counts, per event id, the requests and the acknowledgements (202).
type Subscriber struct {
	srv       *httptest.Server
	behaviour atomic.Pointer[Behaviour]
	delay     atomic.Int64
	slots     atomic.Pointer[chan struct{}]

	mu       sync.Mutex
	attempts map[string]int
	acked    map[string]int
	answers  map[Answer]int
}

// NewSubscriber starts a subscriber that accepts everything.
func NewSubscriber(t testing.TB) *Subscriber {
	s := &Subscriber{attempts: map[string]int{}, acked: map[string]int{}, answers: map[Answer]int{}}
	s.SetBehaviour(Always(Accept))
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the subscriber's address.
func (s *Subscriber) URL() string { return s.srv.URL + "/" }

// SetDelay makes every answer wait d, to make a subscriber slower than the
// ingress and let a backlog build up.
func (s *Subscriber) SetDelay(d time.Duration) { s.delay.Store(int64(d)) }

// SetConcurrency makes the subscriber answer at most n requests at once;
// the others wait their turn. 0 removes the bound.
func (s *Subscriber) SetConcurrency(n int) {
	if n <= 0 {
		s.slots.Store(nil)
		return
	}
	ch := make(chan struct{}, n)
	s.slots.Store(&ch)
}

// SetBehaviour changes how the subscriber answers from now on.
func (s *Subscriber) SetBehaviour(b Behaviour) { s.behaviour.Store(&b) }

func (s *Subscriber) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	id := EventID(r.Header, body)
	s.mu.Lock()
	s.attempts[id]++
	n := s.attempts[id]
	s.mu.Unlock()
	if slots := s.slots.Load(); slots != nil {
		select {
		case *slots <- struct{}{}:
			defer func() { <-*slots }()
		case <-r.Context().Done():
			return
		}
	}
	if d := time.Duration(s.delay.Load()); d > 0 {
		time.Sleep(d)
	}
	a := (*s.behaviour.Load())(id, n)
	s.mu.Lock()
	s.answers[a]++
	if a == Accept {
		s.acked[id]++
	}
	s.mu.Unlock()
	switch a {
	case Accept:
		w.WriteHeader(http.StatusAccepted)
	case Fail:
		w.WriteHeader(http.StatusInternalServerError)
	case Overloaded:
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	case Reject:
		w.WriteHeader(http.StatusBadRequest)
	case Hang:
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	case Reset:
		hj, ok := w.(http.Hijacker)
		if !ok {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		conn, _, err := hj.Hijack()
		if err != nil {
			return
		}
		if tcp, ok := conn.(*net.TCPConn); ok {
			_ = tcp.SetLinger(0)
		}
		conn.Close()
	}
}

// Acked returns, per event id, how many times the subscriber answered 202.
func (s *Subscriber) Acked() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.acked))
	for k, v := range s.acked {
		out[k] = v
	}
	return out
}

// AckedCount is the number of distinct event ids acknowledged.
func (s *Subscriber) AckedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.acked)
}

// AllAcked reports whether the subscriber acknowledged every one of ids.
func AllAcked(s *Subscriber, ids []string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if s.acked[id] == 0 {
			return false
		}
	}
	return true
}

// Answers counts the answers given, by kind.
func (s *Subscriber) Answers() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for a, n := range s.answers {
		out[a.String()] = n
	}
	return out
}

// EventID is the CloudEvents id of a binary or structured request.
func EventID(h http.Header, body []byte) string {
	if id := h.Get("Ce-Id"); id != "" {
		return id
	}
	var s struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &s)
	return s.ID
}
