package rig

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// PathSink is a real HTTP subscriber on loopback that accepts every event
// and records its id by the request's path, so that one server stands for
// the subscribers of many Triggers.
type PathSink struct {
	// URL is the server's base URL; a subscriber is URL plus a path.
	URL string

	mu  sync.Mutex
	ids map[string]map[string]int // path → id → deliveries
}

// NewPathSink starts a PathSink that stops when the test ends.
func NewPathSink(t testing.TB) *PathSink {
	t.Helper()
	s := &PathSink{ids: map[string]map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if s.ids[r.URL.Path] == nil {
			s.ids[r.URL.Path] = map[string]int{}
		}
		s.ids[r.URL.Path][r.Header.Get("Ce-Id")]++
		s.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Received says whether the event id reached path.
func (s *PathSink) Received(path, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids[path][id] > 0
}

// WaitFor waits up to a minute for the event id to reach path.
func (s *PathSink) WaitFor(t testing.TB, path, id string) {
	t.Helper()
	Poll(t, t.Context(), time.Minute, func() error {
		if s.Received(path, id) {
			return nil
		}
		return fmt.Errorf("event %s not delivered to %s", id, path)
	})
}
