package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/ping"
	"github.com/knc-dev/knc/runtime/status"
)

// testClock is a file clock a test steps.
type testClock struct {
	t    *testing.T
	path string
	now  time.Time
}

func newTestClock(t *testing.T, start time.Time) *testClock {
	c := &testClock{t: t, path: filepath.Join(t.TempDir(), "clock")}
	c.set(start)
	return c
}

func (c *testClock) set(now time.Time) {
	c.t.Helper()
	c.now = now
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(now.Format(time.RFC3339Nano)), 0o600); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		c.t.Fatal(err)
	}
}

func (c *testClock) clock() ping.Clock {
	return ping.FileClock{Path: c.path, Poll: 5 * time.Millisecond}
}

var pingStart = time.Date(2026, 3, 1, 10, 0, 30, 0, time.UTC)

func pingTable(sub string, ps ...routing.PingSource) *routing.Table {
	t := brokerTable(trigger("t", sub, nil))
	t.PingSources = ps
	return t
}

func heartbeat(sinkPath, uri string) routing.PingSource {
	return routing.PingSource{
		Source: routing.Source{Namespace: "ns", Name: "hb"}, Schedule: "* * * * *",
		ContentType: "application/json", Data: `{"beat":true}`, Extensions: map[string]string{"team": "ops"},
		Sink: routing.Destination{URI: uri}, SinkPath: sinkPath,
	}
}

// TestPingSourceDeliversThroughBroker fires a PingSource whose sink is a
// Broker: each tick is one event, stored in the Broker's ingress and
// delivered to its Trigger with the attributes of Knative's adapter.
func TestPingSourceDeliversThroughBroker(t *testing.T) {
	sub := newRecorder(t)
	clock := newTestClock(t, pingStart)
	e := startEngine(t, Options{Table: pingTable(sub.srv.URL, heartbeat("/brokers/ns/b", "http://knc-ingress.ns.svc.cluster.local/brokers/ns/b")), PingClock: clock.clock()})
	tick := time.Date(2026, 3, 1, 10, 1, 0, 0, time.UTC)
	clock.set(tick)
	eventually(t, 10*time.Second, "the first tick's delivery", func() bool { return sub.count() == 1 })
	sub.mu.Lock()
	got := sub.events[0]
	sub.mu.Unlock()
	header := map[string]string{}
	for _, k := range []string{"Ce-Id", "Ce-Type", "Ce-Source", "Ce-Time", "Ce-Team", "Ce-Specversion", "Content-Type", "Ce-Knativebrokerttl"} {
		header[k] = got.header.Get(k)
	}
	want := map[string]string{
		"Ce-Id": ping.EventID("ns", "hb", tick), "Ce-Type": "dev.knative.sources.ping",
		"Ce-Source": "/apis/v1/namespaces/ns/pingsources/hb", "Ce-Time": "2026-03-01T10:01:00Z",
		"Ce-Team": "ops", "Ce-Specversion": "1.0", "Content-Type": "application/json",
		// A Trigger's subscriber never sees the TTL.
		"Ce-Knativebrokerttl": "",
	}
	if d := cmp.Diff(want, header); d != "" {
		t.Errorf("delivered headers (-want +got):\n%s", d)
	}
	if string(got.body) != `{"beat":true}` {
		t.Errorf("body = %q", got.body)
	}
	clock.set(tick.Add(time.Minute))
	eventually(t, 10*time.Second, "the second tick's delivery", func() bool { return sub.count() == 2 })
	if ids := sub.ids(); ids[1] != ping.EventID("ns", "hb", tick.Add(time.Minute)) {
		t.Errorf("second id = %s", ids[1])
	}

	st := status.Find(e.Statuses(), "PingSource", "ns", "hb")
	if st == nil {
		t.Fatal("no status for the PingSource")
	}
	if c := st.ConditionOf(status.ConditionReady); c == nil || c.Status != status.True {
		t.Errorf("Ready = %+v", c)
	}
	if wantURI := e.URL() + "/brokers/ns/b"; st.Status.SinkURI != wantURI {
		t.Errorf("sinkUri = %q, want %q", st.Status.SinkURI, wantURI)
	}
}

// TestPingSourceOnceAcrossReplicas runs two engines on one JetStream, both
// firing the same PingSources, for a sink that is a Broker (stored once by
// message ID) and for one outside the table (claimed once): every tick is
// one event.
func TestPingSourceOnceAcrossReplicas(t *testing.T) {
	viaBroker := newRecorder(t)
	direct := newRecorder(t)
	clock := newTestClock(t, pingStart)
	toDirect := heartbeat("", direct.srv.URL+"/direct")
	toDirect.Name = "direct"
	table := pingTable(viaBroker.srv.URL, heartbeat("/brokers/ns/b", "http://knc-ingress.ns.svc.cluster.local/brokers/ns/b"), toDirect)
	a := startEngine(t, Options{Table: table, PingClock: clock.clock(), NATSAddr: "127.0.0.1:0"})
	b := startEngine(t, Options{Table: table, PingClock: clock.clock(), NATS: ExternalNATS{URL: a.NATSURL()}})
	const ticks = 6
	var want []string
	for i := range ticks {
		tick := time.Date(2026, 3, 1, 10, 1+i, 0, 0, time.UTC)
		want = append(want, ping.EventID("ns", "hb", tick))
		clock.set(tick)
		eventually(t, 10*time.Second, fmt.Sprintf("tick %d through the broker", i), func() bool { return viaBroker.count() >= i+1 })
		eventually(t, 10*time.Second, fmt.Sprintf("tick %d sent directly", i), func() bool { return direct.count() >= i+1 })
	}
	// Both replicas are done with every tick once they stop firing.
	a.pinger.Stop()
	b.pinger.Stop()
	info, err := a.js.Stream(context.Background(), a.currentPlan().ForPath("/brokers/ns/b").Names().InStream)
	if err != nil {
		t.Fatal(err)
	}
	if n := info.CachedInfo().State.LastSeq; n != ticks {
		t.Errorf("the broker's ingress stored %d messages for %d ticks", n, ticks)
	}
	eventually(t, 10*time.Second, "the deliveries to settle", func() bool { return viaBroker.count() >= ticks })
	got := viaBroker.ids()
	sort.Strings(got)
	sort.Strings(want)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ids delivered through the broker (-want +got):\n%s", d)
	}
	if n := direct.count(); n != ticks {
		t.Errorf("the direct sink got %d events for %d ticks", n, ticks)
	}
}

// TestPingSourceStatus reports a PingSource whose sink does not resolve,
// and one whose schedule cannot be read.
func TestPingSourceStatus(t *testing.T) {
	sub := newRecorder(t)
	clock := newTestClock(t, pingStart)
	missing := heartbeat("", "")
	missing.Name = "missing"
	missing.Sink = routing.Destination{Ref: &routing.Ref{APIVersion: "serving.knative.dev/v1", Kind: "Service", Namespace: "ns", Name: "gone"}}
	badZone := heartbeat("/brokers/ns/b", "http://knc-ingress.ns.svc.cluster.local/brokers/ns/b")
	badZone.Name = "bad-zone"
	badZone.Timezone = "Mars/Olympus"
	e := startEngine(t, Options{Table: pingTable(sub.srv.URL, missing, badZone), PingClock: clock.clock()})
	type cond struct{ Status, Reason string }
	got := map[string][]cond{}
	for _, name := range []string{"missing", "bad-zone"} {
		st := status.Find(e.Statuses(), "PingSource", "ns", name)
		if st == nil {
			t.Fatalf("no status for %s", name)
		}
		for _, ty := range []string{status.ConditionReady, status.ConditionSinkProvided, status.ConditionDeployed} {
			c := st.ConditionOf(ty)
			got[name] = append(got[name], cond{c.Status, c.Reason})
		}
	}
	want := map[string][]cond{
		"missing":  {{status.False, "NotFound"}, {status.False, "NotFound"}, {status.True, "Deployed"}},
		"bad-zone": {{status.False, "InvalidSchedule"}, {status.True, "SinkProvided"}, {status.False, "InvalidSchedule"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Ready, SinkProvided, Deployed (-want +got):\n%s", d)
	}
}
