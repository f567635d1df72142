package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knc-dev/knc/internal/procstat"
)

// Config describes one run of load.
type Config struct {
	// URL receives the POSTs.
	URL string
	// Connections is how many requests are in flight at most, one per
	// connection.
	Connections int
	// Warmup runs load that is not measured; Duration is the measured
	// window that follows it.
	Warmup, Duration time.Duration
	// Rate, when positive, sends that many requests per second in total on
	// a fixed schedule (open loop). A request sent late, because every
	// connection was busy, counts its latency from its scheduled time, so
	// that a server that falls behind cannot hide its queueing. Zero sends as fast as the connections allow (closed loop).
	Rate float64
	// Body is every request's payload; nil sends a small JSON document.
	Body []byte
	// Events, when set, are sent in turn; otherwise every event is the
	// zero Event.
	Events []Event
	// Gate, when set, bounds the events in flight end to end: a request
	// takes Weight units (1 when unset) before it is sent, and the
	// subscriber gives one back per delivery.
	Gate   *Gate
	Weight int
	// Count, when set, is read when the window opens and when it closes;
	// Result.Counted is the difference, such as the deliveries a
	// subscriber received in the window.
	Count func() int64
	// SlowOver, when positive, makes Result.Slow list the requests of the
	// window whose latency exceeded it.
	SlowOver time.Duration
}

// DefaultBody is the payload sent when Config.Body is nil.
var DefaultBody = []byte(`{"order":42,"items":["a","b"]}`)

// Result is what a run measured in its window.
type Result struct {
	// Requests counts the responses received in the window, Errors those
	// that failed (transport errors and non-2xx answers).
	Requests, Errors int64
	// Status counts the responses by status code; 0 is a transport error.
	Status map[int]int64
	// Start is when the window opened, Elapsed its length; CPU the CPU
	// time the whole process used in it.
	Start        time.Time
	Elapsed, CPU time.Duration
	// Latency holds the latency of every request of the window, sorted.
	Latency Latencies
	// Counted is how much Config.Count grew in the window.
	Counted int64
	// Slow holds, sorted, when each request slower than Config.SlowOver
	// was due (its scheduled time in an open loop, else when it was sent),
	// so that slow requests can be set beside what the process did then.
	Slow []time.Time
	// FirstError is the first error seen, if any.
	FirstError error
}

// CountedPerSecond is the rate at which Config.Count grew in the window.
func (r *Result) CountedPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Counted) / r.Elapsed.Seconds()
}

// PerSecond is the rate of responses in the window.
func (r *Result) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// CPUPerRequest is the CPU time of the whole process per response.
func (r *Result) CPUPerRequest() time.Duration {
	if r.Requests == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Requests)
}

// Phases of a run.
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseDone
)

// Run sends load as cfg says until its window ends or ctx is cancelled.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("loadgen: only http URLs are supported, not %q", cfg.URL)
	}
	if cfg.Connections <= 0 {
		return nil, errors.New("loadgen: at least one connection is needed")
	}
	if cfg.Duration <= 0 {
		return nil, errors.New("loadgen: the measured window must be positive")
	}
	body := cfg.Body
	if body == nil {
		body = DefaultBody
	}
	events := cfg.Events
	if len(events) == 0 {
		events = []Event{{}}
	}
	weight := max(cfg.Weight, 1)

	var (
		phase    atomic.Int32
		seq      atomic.Int64
		slot     atomic.Int64
		start    = time.Now()
		workers  sync.WaitGroup
		mu       sync.Mutex
		status   = map[int]int64{}
		latency  Latencies
		slow     []time.Time
		firstErr error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range cfg.Connections {
		workers.Go(func() {
			w := worker{url: u, body: body}
			defer w.close()
			local := map[int]int64{}
			var lat Latencies
			var slowDue []time.Time
			var werr error
		loop:
			for phase.Load() != phaseDone && ctx.Err() == nil {
				var due time.Time
				if cfg.Rate > 0 {
					k := slot.Add(1) - 1
					due = start.Add(time.Duration(float64(k) / cfg.Rate * float64(time.Second)))
					if d := time.Until(due); d > 0 {
						select {
						case <-time.After(d):
						case <-ctx.Done():
							break loop
						}
						// On time: a timer that fires late is no
						// fault of the server.
						due = time.Time{}
					}
				}
				if cfg.Gate != nil && !cfg.Gate.acquire(ctx, weight) {
					break
				}
				n := seq.Add(1)
				sent := time.Now()
				if due.IsZero() {
					due = sent
				}
				code, err := w.send(events[int(n)%len(events)], n, sent)
				if err == nil && (code < 200 || code > 299) {
					err = fmt.Errorf("POST %s: status %d", cfg.URL, code)
				}
				if err != nil && cfg.Gate != nil {
					// Nothing will be delivered for it.
					cfg.Gate.Release(weight)
				}
				if phase.Load() != phaseMeasure {
					continue
				}
				local[code]++
				took := time.Since(due)
				lat = append(lat, took)
				if cfg.SlowOver > 0 && took > cfg.SlowOver {
					slowDue = append(slowDue, due)
				}
				if err != nil && werr == nil {
					werr = err
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for k, v := range local {
				status[k] += v
			}
			latency = append(latency, lat...)
			slow = append(slow, slowDue...)
			if firstErr == nil {
				firstErr = werr
			}
		})
	}

	var cpu0 time.Duration
	var t0 time.Time
	wait := func(d time.Duration) bool {
		select {
		case <-time.After(d):
			return true
		case <-ctx.Done():
			return false
		}
	}
	if !wait(cfg.Warmup) {
		phase.Store(phaseDone)
		workers.Wait()
		return nil, ctx.Err()
	}
	count := cfg.Count
	if count == nil {
		count = func() int64 { return 0 }
	}
	t0, cpu0, n0 := time.Now(), procstat.CPUTime(), count()
	phase.Store(phaseMeasure)
	ok := wait(cfg.Duration)
	phase.Store(phaseDone)
	elapsed, cpu, counted := time.Since(t0), procstat.CPUTime()-cpu0, count()-n0
	if cfg.Gate != nil {
		cfg.Gate.Close()
	}
	cancel()
	workers.Wait()
	if !ok && ctx.Err() != nil && elapsed < cfg.Duration {
		return nil, context.Cause(ctx)
	}
	slices.Sort(latency)
	slices.SortFunc(slow, time.Time.Compare)
	r := &Result{Status: status, Start: t0, Elapsed: elapsed, CPU: cpu, Latency: latency, Counted: counted, Slow: slow, FirstError: firstErr}
	for code, n := range status {
		r.Requests += n
		if code < 200 || code > 299 {
			r.Errors += n
		}
	}
	return r, nil
}

// worker is one connection's client.
type worker struct {
	url  *url.URL
	body []byte
	c    *conn
	buf  []byte
}

func (w *worker) send(ev Event, seq int64, sent time.Time) (int, error) {
	w.buf = request(w.buf, w.url, ev, seq, sent, w.body)
	for attempt := 0; ; attempt++ {
		if w.c == nil {
			c, err := dial(w.url.Host)
			if err != nil {
				return 0, err
			}
			w.c = c
		}
		code, reuse, err := w.c.do(w.buf)
		if err != nil {
			w.close()
			// A kept-alive connection the server closed in between is
			// retried once on a fresh one.
			if attempt == 0 {
				continue
			}
			return 0, err
		}
		if !reuse {
			w.close()
		}
		return code, nil
	}
}

func (w *worker) close() {
	if w.c != nil {
		w.c.close()
		w.c = nil
	}
}

// Latencies are sorted durations.
type Latencies []time.Duration

// Percentile returns the p-th percentile (0 < p ≤ 100), 0 when empty.
func (l Latencies) Percentile(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	i := int(float64(len(l))*p/100+0.5) - 1
	return l[min(max(i, 0), len(l)-1)]
}

// Gate bounds the events in flight from the load generator to the
// subscribers. It is a counting semaphore whose units the load generator
// takes and the subscriber gives back.
type Gate struct {
	tokens chan struct{}
	closed chan struct{}
	once   sync.Once
}

// NewGate returns a gate of n units.
func NewGate(n int) *Gate {
	g := &Gate{tokens: make(chan struct{}, n), closed: make(chan struct{})}
	for range n {
		g.tokens <- struct{}{}
	}
	return g
}

// acquire takes n units, or none when the gate closes or ctx ends first.
func (g *Gate) acquire(ctx context.Context, n int) bool {
	for i := range n {
		select {
		case <-g.tokens:
		case <-g.closed:
			g.Release(i)
			return false
		case <-ctx.Done():
			g.Release(i)
			return false
		}
	}
	return true
}

// Release gives back n units; units beyond the gate's size are dropped.
func (g *Gate) Release(n int) {
	for range n {
		select {
		case g.tokens <- struct{}{}:
		default:
			return
		}
	}
}

// WaitIdle waits until every unit is back, that is until nothing is in
// flight, or the deadline passes.
func (g *Gate) WaitIdle(deadline time.Time) bool {
	for len(g.tokens) < cap(g.tokens) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// Close wakes every request waiting for units; none is sent afterwards.
func (g *Gate) Close() { g.once.Do(func() { close(g.closed) }) }
