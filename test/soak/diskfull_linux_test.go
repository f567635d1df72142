package soak

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/knc-dev/knc/test/rig"
)

// resumeWithin is how soon after space is freed the runtime must take
// events again and deliver every event it accepted before.
const resumeWithin = 2 * time.Second

// BenchmarkSoakDiskFull fills the data volume of a runtime under load and
// frees it, KNC_DISKFULL_ROUNDS times (20 by default). After each freeing
// the ingress must answer 202 again, and every event accepted before it
// and the first accepted after it must be delivered, within resumeWithin; at the end every accepted event
// is delivered. It reports the median and the worst of both delays.
//
//	KNC_DISKFULL_ROUNDS=20 go test ./test/soak -run '^$' -bench SoakDiskFull -benchtime 1x -v
func BenchmarkSoakDiskFull(b *testing.B) {
	rounds := 20
	if v := os.Getenv("KNC_DISKFULL_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("KNC_DISKFULL_ROUNDS=%q: want a positive number", v)
		}
		rounds = n
	}
	for b.Loop() {
		soakDiskFull(b, rounds)
	}
}

func soakDiskFull(b *testing.B, rounds int) {
	data := rig.SmallFilesystem(b, "32m")
	sub := rig.NewSubscriber(b)
	k := rig.NewKnc(b, kncBinary, rig.Table(rig.Broker("b",
		rig.Trigger("t", sub.URL(), rig.Retrying(100, 50*time.Millisecond, time.Second, "")))),
		"--log-level", "warn")
	k.DataDir = filepath.Join(data, "knc")
	k.Start()
	l := rig.StartLoad(rig.LoadConfig{Targets: func() []string { return []string{k.BrokerURL(rig.Namespace, "b")} }, Senders: 4, Rate: 300, BodyBytes: 1 << 10})
	l.WaitAccepted(b, 100, 30*time.Second)

	var accepting, delivering []time.Duration
	filler := filepath.Join(data, "filler")
	for round := range rounds {
		refused := l.Codes()[503]
		rig.Fill(b, filler)
		rig.Eventually(b, 30*time.Second, "the ingress to refuse events on a full disk", func() bool {
			return l.Codes()[503] >= refused+20
		})
		if err := os.Remove(filler); err != nil {
			b.Fatal(err)
		}
		freed := time.Now()
		full, backlog := l.AcceptedCount(), l.Accepted()
		// Delivery has resumed once the events accepted before the
		// freeing, and the first accepted after it, are delivered.
		var accepted, delivered time.Duration
		var first []string
		rig.Eventually(b, time.Minute, "the ingress to take events again and to deliver them", func() bool {
			if accepted == 0 && l.AcceptedCount() > full {
				accepted = time.Since(freed)
				first = l.Accepted()[full : full+1]
			}
			if accepted > 0 && delivered == 0 && rig.AllAcked(sub, backlog) && rig.AllAcked(sub, first) {
				delivered = time.Since(freed)
			}
			return accepted > 0 && delivered > 0
		})
		accepting, delivering = append(accepting, accepted), append(delivering, delivered)
		b.Logf("round %2d: events accepted again %6s, and delivered (the %d accepted before and the first after) %6s after space was freed",
			round, accepted.Round(time.Millisecond), len(backlog), delivered.Round(time.Millisecond))
		if accepted > resumeWithin || delivered > resumeWithin {
			b.Errorf("round %d: the runtime resumed %s (accepting) and %s (delivering) after space was freed, want within %s",
				round, accepted.Round(time.Millisecond), delivered.Round(time.Millisecond), resumeWithin)
		}
		rig.Eventually(b, time.Minute, "the ingress to take events after the recovery", func() bool {
			return l.AcceptedCount() >= full+100
		})
	}
	l.Stop()
	f := rig.Settle(time.Minute, func() rig.Figures { return rig.Reconcile(l, []*rig.Subscriber{sub}, nil) })
	f.Report(b)
	if f.Lost > 0 {
		b.Errorf("%d accepted events lost: %v", f.Lost, f.LostIDs)
	}
	median := func(d []time.Duration) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[len(s)/2]
	}
	b.ReportMetric(float64(median(accepting).Milliseconds()), "accepting-median-ms")
	b.ReportMetric(float64(slices.Max(accepting).Milliseconds()), "accepting-max-ms")
	b.ReportMetric(float64(median(delivering).Milliseconds()), "delivering-median-ms")
	b.ReportMetric(float64(slices.Max(delivering).Milliseconds()), "delivering-max-ms")
}
