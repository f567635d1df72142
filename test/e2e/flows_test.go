package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/knc-dev/knc/test/rig"
)

// startManifests writes manifests to a directory and runs `knc run` on it,
// so that knc compiles them itself.
func startManifests(t *testing.T, manifests string) *knc {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flows.yaml"), []byte(manifests), 0o600); err != nil {
		t.Fatal(err)
	}
	k := rig.NewKncManifests(t, kncBinary, dir, debugLogging...)
	k.Start()
	return &knc{k}
}

// types lists the CloudEvent types path received, in order.
func types(s *subscriber, path string) []string {
	var out []string
	for _, r := range s.requests(path) {
		out = append(out, r.Header.Get("Ce-Type"))
	}
	return out
}

// A Sequence of three steps: each step's reply goes to the next step, the
// last one's to the Sequence's reply, and the Sequence's address is its
// first Channel's.
func TestSequenceRunsItsSteps(t *testing.T) {
	sub := newSubscriber(t)
	for i := 1; i <= 3; i++ {
		sub.on(fmt.Sprintf("/step%d", i), replyWith(fmt.Sprintf("step%d", i), fmt.Sprintf("step%d.done", i), "ok"))
	}
	k := startManifests(t, fmt.Sprintf(`
apiVersion: flows.knative.dev/v1
kind: Sequence
metadata: {name: pipeline, namespace: e2e}
spec:
  steps:
  - uri: %s
  - uri: %s
  - uri: %s
  reply:
    uri: %s
`, sub.url("/step1"), sub.url("/step2"), sub.url("/step3"), sub.url("/reply")))

	mustSend(t, k.channelURL("pipeline-kn-sequence-0"), event{id: "order-1", typ: "order.created", body: []byte("x")})
	sub.waitFor(t, "/reply", 1)
	for path, want := range map[string][]string{
		"/step1": {"order.created"},
		"/step2": {"step1.done"},
		"/step3": {"step2.done"},
		"/reply": {"step3.done"},
	} {
		if got := types(sub, path); !slices.Equal(got, want) {
			t.Errorf("%s received types %q, want %q", path, got, want)
		}
	}
	if got := sub.requests("/reply")[0].ID(); got != "step3-1" {
		t.Errorf("the reply destination received event %q, want the last step's reply step3-1", got)
	}
	checkFlowStatus(t, k, "Sequence/pipeline", k.channelURL("pipeline-kn-sequence-0"))
}

// checkFlowStatus waits for /status to report the flow Ready, with its
// parts' conditions True, at address.
func checkFlowStatus(t *testing.T, k *knc, key, address string) {
	t.Helper()
	var last statusObject
	rig.Eventually(t, 20*time.Second, key+" Ready in /status", func() bool {
		last = getStatus(t, k)[key]
		return last.condition("Ready") == "True Ready"
	})
	for typ, want := range map[string]string{"ChannelsReady": "True ChannelsReady", "SubscriptionsReady": "True SubscriptionsReady", "Addressable": "True AddressSet"} {
		if got := last.condition(typ); got != want {
			t.Errorf("%s: %s is %q, want %q", key, typ, got, want)
		}
	}
	if last.Status.Address == nil || last.Status.Address.URL != address {
		t.Errorf("%s: address %+v, want %s", key, last.Status.Address, address)
	}
}

// A Parallel fans each event out to every branch through the branch's
// filter: a filter that answers with an event lets it through to the
// branch's subscriber, one that answers with none stops it, and a branch
// without a filter takes every event. A subscriber's reply goes to the
// branch's reply, else to the Parallel's.
func TestParallelFansOutThroughFilters(t *testing.T) {
	sub := newSubscriber(t)
	sub.on("/pass", func(w http.ResponseWriter, r *http.Request, n int) {
		// A filter that keeps the event answers with it.
		replyWith("passed", r.Header.Get("Ce-Type"), "kept")(w, r, n)
	})
	sub.on("/refuse", status(http.StatusAccepted))
	sub.on("/branch0", replyWith("b0", "branch0.done", "ok"))
	sub.on("/branch2", replyWith("b2", "branch2.done", "ok"))
	k := startManifests(t, fmt.Sprintf(`
apiVersion: flows.knative.dev/v1
kind: Parallel
metadata: {name: fan, namespace: e2e}
spec:
  branches:
  - filter: {uri: %q}
    subscriber: {uri: %q}
  - filter: {uri: %q}
    subscriber: {uri: %q}
  - subscriber: {uri: %q}
    reply: {uri: %q}
  reply:
    uri: %q
`, sub.url("/pass"), sub.url("/branch0"), sub.url("/refuse"), sub.url("/branch1"), sub.url("/branch2"), sub.url("/branch2-reply"), sub.url("/reply")))

	for i := 1; i <= 2; i++ {
		mustSend(t, k.channelURL("fan-kn-parallel"), event{id: fmt.Sprintf("e%d", i), typ: "order.created", body: []byte("x")})
	}
	sub.waitFor(t, "/refuse", 2)
	sub.waitFor(t, "/branch0", 2)
	sub.waitFor(t, "/reply", 2)
	sub.waitFor(t, "/branch2-reply", 2)
	if got := types(sub, "/branch2"); !slices.Equal(got, []string{"order.created", "order.created"}) {
		t.Errorf("the unfiltered branch received %q, want both events", got)
	}
	if got := types(sub, "/reply"); !slices.Equal(got, []string{"branch0.done", "branch0.done"}) {
		t.Errorf("the Parallel's reply received %q, want branch 0's replies only (branch 2 has its own)", got)
	}
	if got := types(sub, "/branch2-reply"); !slices.Equal(got, []string{"branch2.done", "branch2.done"}) {
		t.Errorf("branch 2's reply received %q, want its subscriber's replies", got)
	}
	// The refusing filter answered both events before the checks above
	// saw the other branches' replies; a third event through the
	// passing branch gives the runtime time to have sent anything
	// further, and branch 1 must still have nothing.
	mustSend(t, k.channelURL("fan-kn-parallel"), event{id: "e3", typ: "order.created", body: []byte("x")})
	sub.waitFor(t, "/reply", 3)
	rig.Eventually(t, 20*time.Second, "the refusing filter to see the third event", func() bool {
		return len(sub.requests("/refuse")) == 3
	})
	if got := sub.requests("/branch1"); len(got) != 0 {
		t.Errorf("branch 1's subscriber received %d events; its filter refused every event", len(got))
	}
	checkFlowStatus(t, k, "Parallel/fan", k.channelURL("fan-kn-parallel"))
}
