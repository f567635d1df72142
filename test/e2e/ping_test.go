package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/test/rig"
)

// stepClock is the test clock of the runtime (KNC_TEST_CLOCK_FILE): a file
// holding the time PingSources fire by, which the test rewrites.
type stepClock struct {
	t    *testing.T
	path string
}

// newStepClock makes a clock at start and points every knc started from
// now on in this test at it.
func newStepClock(t *testing.T, start time.Time) *stepClock {
	c := &stepClock{t: t, path: filepath.Join(t.TempDir(), "clock")}
	c.set(start)
	t.Setenv("KNC_TEST_CLOCK_FILE", c.path)
	return c
}

func (c *stepClock) set(now time.Time) {
	c.t.Helper()
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(now.UTC().Format(time.RFC3339Nano)), 0o600); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		c.t.Fatal(err)
	}
}

const pingManifests = `apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: default, namespace: e2e}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: pings, namespace: e2e}
spec:
  broker: default
  filter: {attributes: {type: dev.knative.sources.ping}}
  subscriber: {uri: SUBSCRIBER}
  delivery: {retry: 3, backoffDelay: PT0.05S}
---
apiVersion: sources.knative.dev/v1
kind: PingSource
metadata: {name: heartbeat, namespace: e2e}
spec:
  schedule: "*/5 * * * *"
  timezone: Europe/Paris
  contentType: application/json
  data: '{"message": "Hello world!"}'
  ceOverrides: {extensions: {team: ops}}
  sink:
    ref: {apiVersion: eventing.knative.dev/v1, kind: Broker, name: default}
`

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestPingSourceThroughBroker runs knc run on manifests with a PingSource
// whose sink is a Broker: each tick of the test clock is delivered to the
// Trigger's subscriber with the attributes of Knative's adapter, retried
// with the Trigger's delivery, and /status reports the PingSource.
func TestPingSourceThroughBroker(t *testing.T) {
	sub := newSubscriber(t)
	// The first attempt of the first event fails: the Trigger's delivery
	// retries it.
	sub.on("/pings", func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	dir := t.TempDir()
	manifests := regexp.MustCompile(`SUBSCRIBER`).ReplaceAllString(pingManifests, sub.url("/pings"))
	if err := os.WriteFile(filepath.Join(dir, "objects.yaml"), []byte(manifests), 0o600); err != nil {
		t.Fatal(err)
	}
	clock := newStepClock(t, time.Date(2026, 3, 1, 9, 58, 0, 0, time.UTC))
	k := &knc{rig.NewKncManifests(t, kncBinary, dir, debugLogging...)}
	k.Start()

	// 10:00 UTC is 11:00 in Paris, a tick of */5.
	clock.set(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	reqs := sub.waitFor(t, "/pings", 2)
	first, retry := reqs[0], reqs[1]
	if first.ID() != retry.ID() {
		t.Errorf("the retry has id %s, the first attempt %s", retry.ID(), first.ID())
	}
	got := map[string]string{}
	for _, h := range []string{"Ce-Specversion", "Ce-Type", "Ce-Source", "Ce-Time", "Ce-Team", "Content-Type"} {
		got[h] = retry.Header.Get(h)
	}
	want := map[string]string{
		"Ce-Specversion": "1.0",
		"Ce-Type":        "dev.knative.sources.ping",
		"Ce-Source":      "/apis/v1/namespaces/e2e/pingsources/heartbeat",
		"Ce-Time":        "2026-03-01T10:00:00Z",
		"Ce-Team":        "ops",
		"Content-Type":   "application/json",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("headers (-want +got):\n%s", d)
	}
	if !uuidPattern.MatchString(retry.ID()) {
		t.Errorf("id %q is not a name-based UUID", retry.ID())
	}
	if string(retry.Body) != `{"message": "Hello world!"}` {
		t.Errorf("body = %q", retry.Body)
	}

	// The next tick is a new event.
	clock.set(time.Date(2026, 3, 1, 10, 5, 0, 0, time.UTC))
	reqs = sub.waitFor(t, "/pings", 3)
	if reqs[2].ID() == first.ID() || reqs[2].Header.Get("Ce-Time") != "2026-03-01T10:05:00Z" {
		t.Errorf("the second tick: id %s (first %s), time %s", reqs[2].ID(), first.ID(), reqs[2].Header.Get("Ce-Time"))
	}

	st, ok := getStatus(t, k)["PingSource/heartbeat"]
	if !ok {
		t.Fatal("/status has no PingSource heartbeat")
	}
	gotStatus := []string{st.condition("Ready"), st.condition("SinkProvided"), st.condition("Deployed"), st.Status.SinkURI}
	wantStatus := []string{"True Ready", "True SinkProvided", "True Deployed", k.brokerURL("default")}
	if d := cmp.Diff(wantStatus, gotStatus); d != "" {
		t.Errorf("Ready, SinkProvided, Deployed, sinkUri (-want +got):\n%s", d)
	}
	if len(st.Status.CEAttributes) != 1 || st.Status.CEAttributes[0].Type != "dev.knative.sources.ping" {
		t.Errorf("ceAttributes = %+v", st.Status.CEAttributes)
	}
}
