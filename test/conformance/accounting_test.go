package conformance

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knc-dev/knc/test/rig"
)

// outcomes are the accounting counters of one Trigger or Subscription, as
// knc's /metrics shows them.
type outcomes struct {
	Accepted, Delivered, DeadLettered float64
	Kept, Dropped                     map[string]float64
}

func (o outcomes) settled() float64 {
	n := o.Delivered + o.DeadLettered
	for reason, v := range o.Kept {
		// A copy of a dead-lettered delivery and a delivery's reply are
		// kept beside the delivery's own outcome.
		if reason != "dead-lettered" && reason != "ttl" {
			n += v
		}
	}
	for reason, v := range o.Dropped {
		// An evicted kept letter was counted kept.
		if reason != "kept-letters-full" {
			n += v
		}
	}
	return n
}

var sampleLine = regexp.MustCompile(`^(knc_deliveries_[a-z_]+_total)\{([^}]*)\} (\S+)$`)
var labelPair = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)

// accountOf reads the per-target accounting counters from k's /metrics,
// keyed by "target_kind/target" ("trigger/NAME", "subscription/NAME").
func accountOf(t *testing.T, k *rig.Knc) map[string]outcomes {
	t.Helper()
	resp, err := http.Get(k.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]outcomes{}
	for _, line := range strings.Split(string(b), "\n") {
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		labels := map[string]string{}
		for _, p := range labelPair.FindAllStringSubmatch(m[2], -1) {
			labels[p[1]] = p[2]
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		key := labels["target_kind"] + "/" + labels["target"]
		o := out[key]
		switch m[1] {
		case "knc_deliveries_accepted_total":
			o.Accepted += v
		case "knc_deliveries_delivered_total":
			o.Delivered += v
		case "knc_deliveries_dead_lettered_total":
			o.DeadLettered += v
		case "knc_deliveries_kept_total":
			if o.Kept == nil {
				o.Kept = map[string]float64{}
			}
			o.Kept[labels["reason"]] += v
		case "knc_deliveries_dropped_total":
			if o.Dropped == nil {
				o.Dropped = map[string]float64{}
			}
			o.Dropped[labels["reason"]] += v
		default:
			continue
		}
		out[key] = o
	}
	return out
}

// knownDropReasons are the reasons a delivery may be given up for; an
// unreachable destination must not need a new one.
var knownDropReasons = map[string]bool{
	"ttl": true, "no-reply-destination": true, "kept-letters-full": true, "unrouted": true, "unreadable": true,
}

// awaitSettled waits until every target in want has settled all it
// accepted, and checks the invariant accepted = delivered + dead-lettered +
// dropped (by a known reason) and each outcome against want.
func awaitSettled(t *testing.T, k *rig.Knc, want map[string]outcomes) {
	t.Helper()
	var got map[string]outcomes
	defer func() { t.Logf("accounting: %+v", got) }()
	rig.Eventually(t, 20*time.Second, "every delivery to settle", func() bool {
		got = accountOf(t, k)
		for key, w := range want {
			g := got[key]
			if g.Accepted != w.Accepted || g.settled() != g.Accepted {
				return false
			}
		}
		return true
	})
	for key, w := range want {
		g := got[key]
		if g.Delivered != w.Delivered || g.DeadLettered != w.DeadLettered {
			t.Errorf("%s: delivered %v, dead-lettered %v; want %v, %v", key, g.Delivered, g.DeadLettered, w.Delivered, w.DeadLettered)
		}
		for reason, n := range g.Kept {
			if w.Kept[reason] != n {
				t.Errorf("%s: %v kept for %q, want %v", key, n, reason, w.Kept[reason])
			}
		}
		for reason, n := range g.Dropped {
			if !knownDropReasons[reason] {
				t.Errorf("%s: %v dropped for an unknown reason %q", key, n, reason)
			}
			if w.Dropped[reason] != n {
				t.Errorf("%s: %v dropped for %q, want %v", key, n, reason, w.Dropped[reason])
			}
		}
	}
}
