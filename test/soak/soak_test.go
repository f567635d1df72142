package soak

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knc-dev/knc/test/rig"
)

var kncBinary string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	// The package holds a benchmark only: `make test` need not build knc.
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "knc-soak-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	if kncBinary, err = rig.BuildKnc(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return m.Run()
}

// sample is one reading of the runtime's resources.
type sample struct {
	at         time.Duration
	rssKiB     int64
	goroutines float64
}

// rssKiB reads VmRSS of pid from /proc.
func rssKiB(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

func mean(s []sample, f func(sample) float64) float64 {
	var sum float64
	for _, x := range s {
		sum += f(x)
	}
	return sum / float64(len(s))
}

// BenchmarkSoak measures the rate the runtime sustains for 20 seconds
// with a subscriber that accepts everything, then sends half of it for
// KNC_SOAK_DURATION (10m by default), sampling the runtime's RSS and
// goroutines every 10 seconds. It compares the first and the last fifth of
// the samples taken after a warm-up minute, and fails when RSS grows by
// more than a quarter or the goroutines by more than 20% (plus a margin of
// 20 for the ones a burst of connections leaves behind for a while).
//
//	KNC_SOAK_DURATION=10m go test ./test/soak -run '^$' -bench Soak -benchtime 1x -timeout 30m
func BenchmarkSoak(b *testing.B) {
	duration := 10 * time.Minute
	if v := os.Getenv("KNC_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("KNC_SOAK_DURATION: %v", err)
		}
		duration = d
	}
	for b.Loop() {
		soak(b, duration)
	}
}

func soak(b *testing.B, duration time.Duration) {
	sub := rig.NewSubscriber(b)
	k := rig.StartKnc(b, kncBinary, rig.Table(rig.Broker("b",
		rig.Trigger("t", sub.URL(), rig.Retrying(10, 100*time.Millisecond, 5*time.Second, "")))),
		"--log-level", "warn")
	url := k.BrokerURL(rig.Namespace, "b")
	to := func() []string { return []string{url} }

	// The maximum: as fast as 32 senders go, delivered included.
	probe := rig.StartLoad(rig.LoadConfig{Targets: to, Senders: 32, Prefix: "max-", BodyBytes: 512})
	time.Sleep(20 * time.Second)
	probe.Stop()
	maxRate := float64(sub.AckedCount()) / 20
	rate := maxRate / 2
	b.Logf("maximum sustained rate %.0f events/s (accepted %d, delivered %d in 20s); soaking at %.0f/s for %s",
		maxRate, probe.AcceptedCount(), sub.AckedCount(), rate, duration)
	rig.Settle(60*time.Second, func() rig.Figures { return rig.Reconcile(probe, []*rig.Subscriber{sub}, nil) })

	l := rig.StartLoad(rig.LoadConfig{Targets: to, Senders: 16, Rate: rate, Prefix: "soak-", BodyBytes: 512})
	start := time.Now()
	var samples []sample
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for time.Since(start) < duration {
		<-tick.C
		rss, err := rssKiB(k.Pid())
		if err != nil {
			b.Fatal(err)
		}
		g, err := rig.Metric(k.URL(), "go_goroutines", nil)
		if err != nil {
			b.Fatal(err)
		}
		s := sample{at: time.Since(start).Round(time.Second), rssKiB: rss, goroutines: g}
		samples = append(samples, s)
		b.Logf("%6s  RSS %7.1f MiB  goroutines %5.0f  accepted %d  delivered %d", s.at, float64(rss)/1024, g, l.AcceptedCount(), sub.AckedCount())
	}
	l.Stop()
	f := rig.Settle(2*time.Minute, func() rig.Figures { return rig.Reconcile(l, []*rig.Subscriber{sub}, nil) })
	f.Report(b)

	// Ignore the first minute, when buffers and caches grow to their size.
	var steady []sample
	for _, s := range samples {
		if s.at > time.Minute || duration < 3*time.Minute {
			steady = append(steady, s)
		}
	}
	if len(steady) < 5 {
		b.Logf("only %d samples: too short a soak to judge growth", len(steady))
		return
	}
	n := max(1, len(steady)/5)
	first, last := steady[:n], steady[len(steady)-n:]
	rss0, rss1 := mean(first, func(s sample) float64 { return float64(s.rssKiB) }), mean(last, func(s sample) float64 { return float64(s.rssKiB) })
	g0, g1 := mean(first, func(s sample) float64 { return s.goroutines }), mean(last, func(s sample) float64 { return s.goroutines })
	b.ReportMetric(rate, "events/s")
	b.ReportMetric((rss1-rss0)/1024, "rss-growth-MiB")
	b.ReportMetric(g1-g0, "goroutine-growth")
	b.ReportMetric(rss1/1024, "rss-MiB")
	b.Logf("SOAK %s at %.0f events/s: RSS %.1f → %.1f MiB, goroutines %.0f → %.0f; %s",
		duration, rate, rss0/1024, rss1/1024, g0, g1, f)
	if rss1 > rss0*1.25 {
		b.Errorf("RSS grew from %.1f to %.1f MiB", rss0/1024, rss1/1024)
	}
	if g1 > g0*1.2+20 {
		b.Errorf("goroutines grew from %.0f to %.0f", g0, g1)
	}
}
