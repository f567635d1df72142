package rig

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// LoadConfig describes the events a Load sends.
type LoadConfig struct {
	// Targets returns the ingress URLs to send to, read before every
	// event: the n-th event goes to Targets()[n % len]. A target that is
	// down (a killed runtime) fails its requests; they are not accepted.
	Targets func() []string
	// Senders is how many requests are in flight at most.
	Senders int
	// Rate, when positive, bounds the events sent per second in total.
	Rate float64
	// BodyBytes is the size of each event's payload.
	BodyBytes int
	// Prefix starts every event id; ids are unique within a Load.
	Prefix string
	// Type is the events' type; "load" by default.
	Type string
	// Header is added to every request, such as Authorization.
	Header http.Header
}

// Load sends events until stopped and remembers which ids were answered
// 202: only those were promised to be delivered.
type Load struct {
	cfg    LoadConfig
	client *http.Client
	next   atomic.Int64
	stop   chan struct{}
	wg     sync.WaitGroup

	mu       sync.Mutex
	accepted []string
	codes    map[int]int
	sent     int
}

// StartLoad starts sending.
func StartLoad(cfg LoadConfig) *Load {
	if cfg.Senders <= 0 {
		cfg.Senders = 4
	}
	if cfg.Type == "" {
		cfg.Type = "load"
	}
	l := &Load{
		cfg:   cfg,
		stop:  make(chan struct{}),
		codes: map[int]int{},
		client: &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{
			MaxIdleConnsPerHost: cfg.Senders,
		}},
	}
	body := bytes.Repeat([]byte("x"), cfg.BodyBytes)
	var interval time.Duration
	if cfg.Rate > 0 {
		interval = time.Duration(float64(cfg.Senders) / cfg.Rate * float64(time.Second))
	}
	for range cfg.Senders {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			var tick <-chan time.Time
			if interval > 0 {
				t := time.NewTicker(interval)
				defer t.Stop()
				tick = t.C
			}
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				if tick != nil {
					select {
					case <-tick:
					case <-l.stop:
						return
					}
				}
				l.send(body)
			}
		}()
	}
	return l
}

func (l *Load) send(body []byte) {
	n := l.next.Add(1)
	id := fmt.Sprintf("%s%d", l.cfg.Prefix, n)
	targets := l.cfg.Targets()
	url := targets[int(n)%len(targets)]
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Ce-Specversion", "1.0")
	req.Header.Set("Ce-Id", id)
	req.Header.Set("Ce-Source", "/rig")
	req.Header.Set("Ce-Type", l.cfg.Type)
	req.Header.Set("Content-Type", "application/octet-stream")
	for k, v := range l.cfg.Header {
		req.Header[k] = v
	}
	code := 0
	resp, err := l.client.Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		code = resp.StatusCode
	} else {
		// The target is down: do not spin while it restarts.
		time.Sleep(10 * time.Millisecond)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent++
	l.codes[code]++
	if code == http.StatusAccepted {
		l.accepted = append(l.accepted, id)
	}
}

// Stop stops sending and waits for the requests in flight.
func (l *Load) Stop() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
	l.client.CloseIdleConnections()
}

// Accepted returns the ids answered 202 so far.
func (l *Load) Accepted() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.accepted...)
}

// AcceptedCount is the number of events answered 202 so far.
func (l *Load) AcceptedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.accepted)
}

// Sent is the number of requests that got an answer or failed.
func (l *Load) Sent() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sent
}

// Codes counts the answers by status code; 0 counts requests that failed
// without one.
func (l *Load) Codes() map[int]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[int]int, len(l.codes))
	for k, v := range l.codes {
		out[k] = v
	}
	return out
}

// WaitAccepted waits until at least n events were accepted.
func (l *Load) WaitAccepted(t testing.TB, n int, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, fmt.Sprintf("%d accepted events", n), func() bool { return l.AcceptedCount() >= n })
}
