package loadgen

import (
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Subscriber is an HTTP server on loopback that accepts every event with
// 202 and measures how long each took from the load generator.
type Subscriber struct {
	// URL is the server's base URL; every path is accepted.
	URL string

	gate      atomic.Pointer[Gate]
	received  atomic.Int64
	recording atomic.Bool
	mu        sync.Mutex
	latency   Latencies
	srv       *http.Server
	done      chan struct{}
}

// NewSubscriber starts a subscriber on 127.0.0.1.
func NewSubscriber() (*Subscriber, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Subscriber{URL: "http://" + ln.Addr().String(), done: make(chan struct{})}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	return s, nil
}

func (s *Subscriber) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.WriteHeader(http.StatusAccepted)
	s.received.Add(1)
	if g := s.gate.Load(); g != nil {
		g.Release(1)
	}
	if !s.recording.Load() {
		return
	}
	v := r.Header["Ce-"+canonicalSent]
	if len(v) == 0 {
		return
	}
	n, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil {
		return
	}
	d := time.Since(time.Unix(0, n))
	s.mu.Lock()
	s.latency = append(s.latency, d)
	s.mu.Unlock()
}

// canonicalSent is SentExtension as a canonical header name suffix.
const canonicalSent = "Loadsent"

// SetGate makes every delivery from now on give one unit back to g; nil
// gives none.
func (s *Subscriber) SetGate(g *Gate) { s.gate.Store(g) }

// Received is the number of deliveries so far.
func (s *Subscriber) Received() int64 { return s.received.Load() }

// Record starts collecting latencies, dropping those collected before.
func (s *Subscriber) Record() {
	s.mu.Lock()
	s.latency = s.latency[:0]
	s.mu.Unlock()
	s.recording.Store(true)
}

// Latencies stops collecting and returns the latencies since Record,
// sorted.
func (s *Subscriber) Latencies() Latencies {
	s.recording.Store(false)
	s.mu.Lock()
	defer s.mu.Unlock()
	l := slices.Clone(s.latency)
	slices.Sort(l)
	return l
}

// WaitFor waits until n deliveries have arrived, or the deadline passes.
func (s *Subscriber) WaitFor(n int64, deadline time.Time) bool {
	for s.received.Load() < n {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// Close stops the server.
func (s *Subscriber) Close() error {
	err := s.srv.Close()
	<-s.done
	return err
}
