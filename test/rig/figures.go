package rig

import (
	"bufio"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Figures reconcile what a load sent with what subscribers acknowledged.
type Figures struct {
	// Sent counts the requests made, Accepted those answered 202.
	Sent, Accepted int
	// Delivered counts the accepted events the subscribers acknowledged,
	// DeadLettered those only a dead-letter sink acknowledged, Lost those
	// neither did.
	Delivered, DeadLettered, Lost int
	// Duplicates counts the acknowledgements beyond the first of an event.
	Duplicates int
	// Codes counts the load's answers by status code (0: no answer).
	Codes map[int]int
	// Metrics holds figures read from the runtime's /metrics.
	Metrics map[string]float64
	// LostIDs lists a few of the lost events, for the failure message.
	LostIDs []string
}

// Reconcile computes the figures of a load whose events went to the
// subscribers delivered, and whose failures went to the dead-letter sink
// sink (nil when there is none).
func Reconcile(l *Load, delivered []*Subscriber, sink *Subscriber) Figures {
	f := Figures{Sent: l.Sent(), Codes: l.Codes(), Metrics: map[string]float64{}}
	acked := map[string]int{}
	for _, s := range delivered {
		for id, n := range s.Acked() {
			acked[id] += n
		}
	}
	dead := map[string]int{}
	if sink != nil {
		dead = sink.Acked()
	}
	accepted := l.Accepted()
	f.Accepted = len(accepted)
	for _, id := range accepted {
		switch n := acked[id]; {
		case n > 0:
			f.Delivered++
			f.Duplicates += n - 1
		case dead[id] > 0:
			f.DeadLettered++
			f.Duplicates += dead[id] - 1
		default:
			f.Lost++
			if len(f.LostIDs) < 10 {
				f.LostIDs = append(f.LostIDs, id)
			}
		}
	}
	return f
}

func (f Figures) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sent %d, accepted %d, delivered %d, dead-lettered %d, duplicates %d, lost %d",
		f.Sent, f.Accepted, f.Delivered, f.DeadLettered, f.Duplicates, f.Lost)
	if len(f.Codes) > 0 {
		var codes []string
		for _, c := range slices.Sorted(maps.Keys(f.Codes)) {
			name := strconv.Itoa(c)
			if c == 0 {
				name = "no answer"
			}
			codes = append(codes, fmt.Sprintf("%s: %d", name, f.Codes[c]))
		}
		fmt.Fprintf(&b, "; answers {%s}", strings.Join(codes, ", "))
	}
	if len(f.Metrics) > 0 {
		var ms []string
		for _, k := range slices.Sorted(maps.Keys(f.Metrics)) {
			ms = append(ms, fmt.Sprintf("%s %v", k, f.Metrics[k]))
		}
		fmt.Fprintf(&b, "; metrics {%s}", strings.Join(ms, ", "))
	}
	return b.String()
}

// Report logs the figures on one line that `make reliability` shows, and
// fails the test when an accepted event is lost.
func (f Figures) Report(t testing.TB) {
	t.Helper()
	t.Logf("FIGURES %s: %s", t.Name(), f)
	if f.Lost > 0 {
		t.Errorf("%d accepted events were lost, such as %v", f.Lost, f.LostIDs)
	}
}

// Settle waits until every accepted event is delivered or dead-lettered,
// or timeout passes, and returns the figures then.
func Settle(timeout time.Duration, figures func() Figures) Figures {
	deadline := time.Now().Add(timeout)
	for {
		f := figures()
		if f.Lost == 0 || time.Now().After(deadline) {
			return f
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Metric sums the samples of the metric name whose labels include labels,
// as served at baseURL/metrics.
func Metric(baseURL, name string, labels map[string]string) (float64, error) {
	resp, err := http.Get(baseURL + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var sum float64
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for k, v := range labels {
			if !strings.Contains(line, k+`="`+v+`"`) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("metric line %q: %w", line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

// Accounting reads the delivery accounting of one Trigger or Subscription
// from baseURL/metrics.
type Accounting struct {
	Accepted, Delivered, DeadLettered, Kept, Dropped float64
	// Evicted are the kept letters dropped to make room for newer ones
	// (dropped, reason kept-letters-full), which were counted kept: they
	// are in Dropped, and not an outcome of their own.
	Evicted float64
	// Beside are the letters kept beside a delivery's own outcome (kept,
	// reason dead-lettered: a copy of a dead-lettered delivery; reason
	// ttl: a delivered delivery's reply): they are in Kept, and not an
	// outcome of their own.
	Beside float64
}

// ReadAccounting reads the accounting counters of target.
func ReadAccounting(baseURL, target string) (Accounting, error) {
	var a Accounting
	l := map[string]string{"target": target}
	var err error
	for _, m := range []struct {
		name string
		v    *float64
	}{
		{"knc_deliveries_accepted_total", &a.Accepted},
		{"knc_deliveries_delivered_total", &a.Delivered},
		{"knc_deliveries_dead_lettered_total", &a.DeadLettered},
		{"knc_deliveries_kept_total", &a.Kept},
		{"knc_deliveries_dropped_total", &a.Dropped},
	} {
		if *m.v, err = Metric(baseURL, m.name, l); err != nil {
			return a, err
		}
	}
	if a.Evicted, err = Metric(baseURL, "knc_deliveries_dropped_total", map[string]string{"target": target, "reason": "kept-letters-full"}); err != nil {
		return a, err
	}
	for _, reason := range []string{"dead-lettered", "ttl"} {
		n, err := Metric(baseURL, "knc_deliveries_kept_total", map[string]string{"target": target, "reason": reason})
		if err != nil {
			return a, err
		}
		a.Beside += n
	}
	return a, nil
}

// Balanced reports whether accepted = delivered + dead-lettered + kept +
// dropped (but for kept letters evicted later, and letters kept beside an
// outcome).
func (a Accounting) Balanced() bool {
	return a.Accepted == a.Delivered+a.DeadLettered+a.Kept-a.Beside+a.Dropped-a.Evicted
}

func (a Accounting) String() string {
	return fmt.Sprintf("accepted %v = delivered %v + dead-lettered %v + kept %v (of which %v beside an outcome) + dropped %v (of which %v kept letters evicted)", a.Accepted, a.Delivered, a.DeadLettered, a.Kept, a.Beside, a.Dropped, a.Evicted)
}
