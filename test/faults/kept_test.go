package faults

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knc-dev/knc/runtime/kept"
	"github.com/knc-dev/knc/test/rig"
)

const adminToken = "faults-admin-token"

// freeAddr is a loopback address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// dlq runs knc dlq against admin with the token and returns its stdout.
func dlq(t *testing.T, admin string, args ...string) string {
	t.Helper()
	return rig.DLQ(t, kncBinary, admin, adminToken, args[0], args[1:]...)
}

func sendEvents(t *testing.T, url string, n int, prefix string) {
	t.Helper()
	for i := range n {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"n":1}`))
		req.Header.Set("Ce-Specversion", "1.0")
		req.Header.Set("Ce-Id", fmt.Sprint(prefix, i))
		req.Header.Set("Ce-Source", "/faults")
		req.Header.Set("Ce-Type", "t")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("event %d: status %d, want 202", i, resp.StatusCode)
		}
	}
}

// half answers 400 to half of the events and never answers the others.
func half(id string, _ int) rig.Answer {
	h := fnv.New32a()
	h.Write([]byte(id))
	if h.Sum32()%2 == 0 {
		return rig.Reject
	}
	return rig.Hang
}

// TestKeptLettersAreReplayedByFilter fails 100 events at one Trigger
// (400s and timeouts, no dead-letter sink), lists them with knc dlq, fixes
// the subscriber and replays them by filter: all 100 reach it and none
// reaches the Broker's other Trigger; a second replay sends nothing; the
// accounting balances exactly.
func TestKeptLettersAreReplayedByFilter(t *testing.T) {
	const events = 100
	sub := rig.NewSubscriber(t)
	sub.SetBehaviour(half)
	other := rig.NewSubscriber(t)
	table := rig.Table(rig.Broker("b",
		rig.Trigger("fixable", sub.URL(), rig.Retrying(0, 0, 300*time.Millisecond, "")),
		rig.Trigger("other", other.URL(), nil)))
	tokens := t.TempDir()
	if err := os.WriteFile(filepath.Join(tokens, "admin"), []byte(adminToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	admin := "http://" + freeAddr(t)
	k := rig.StartKnc(t, kncBinary, table, "--admin-addr", strings.TrimPrefix(admin, "http://"), "--bearer-tokens", tokens)

	sendEvents(t, k.BrokerURL(rig.Namespace, "b"), events, "e")
	rig.Eventually(t, 60*time.Second, "100 kept letters", func() bool {
		a, err := rig.ReadAccounting(admin, "fixable")
		return err == nil && a.Kept == events
	})

	var listed kept.ListResult
	if err := json.Unmarshal([]byte(dlq(t, admin, "list", "--trigger", "fixable", "-o", "json")), &listed); err != nil {
		t.Fatal(err)
	}
	answers := map[string]int{}
	for _, l := range listed.Letters {
		if l.Reason != kept.ReasonNoDeadLetterSink {
			t.Errorf("letter %s kept for %q, want %q", l.ID, l.Reason, kept.ReasonNoDeadLetterSink)
		}
		switch {
		case l.Status == http.StatusBadRequest:
			answers["400"]++
		case l.Status == 0 && strings.Contains(l.Error, "timeout") || strings.Contains(l.Error, "deadline"):
			answers["timeout"]++
		default:
			t.Errorf("letter %s: status %d, error %q; want 400 or a timeout", l.ID, l.Status, l.Error)
		}
	}
	rejected, hung := 0, 0
	for i := range events {
		if half(fmt.Sprint("e", i), 1) == rig.Reject {
			rejected++
		} else {
			hung++
		}
	}
	if len(listed.Letters) != events || answers["400"] != rejected || answers["timeout"] != hung {
		t.Fatalf("%d letters listed, answers %v; want %d, %d of 400 and %d timeouts", len(listed.Letters), answers, events, rejected, hung)
	}

	sub.SetBehaviour(rig.Always(rig.Accept))
	if out := dlq(t, admin, "replay", "--trigger", "fixable", "--rate", "0"); !strings.Contains(out, fmt.Sprintf("replayed %d, skipped 0", events)) {
		t.Fatalf("replay printed:\n%s", out)
	}
	rig.Eventually(t, 60*time.Second, "the fixed subscriber to acknowledge every event", func() bool { return sub.AckedCount() == events })
	if out := dlq(t, admin, "replay", "--trigger", "fixable"); !strings.Contains(out, fmt.Sprintf("replayed 0, skipped %d", events)) {
		t.Errorf("a second replay printed:\n%s", out)
	}
	var a rig.Accounting
	rig.Eventually(t, 30*time.Second, "the accounting to balance", func() bool {
		var err error
		a, err = rig.ReadAccounting(admin, "fixable")
		return err == nil && a.Balanced() && a.Delivered == events
	})
	if a.Accepted != 2*events || a.Kept != events || a.Dropped != 0 {
		t.Errorf("fixable: %s; want %d accepted, %d kept, %d delivered", a, 2*events, events, events)
	}
	for id, n := range sub.Acked() {
		if n != 1 {
			t.Errorf("event %s acknowledged %d times after the replay, want 1", id, n)
		}
	}
	o, err := rig.ReadAccounting(admin, "other")
	if err != nil {
		t.Fatal(err)
	}
	if !o.Balanced() || o.Accepted != events || o.Delivered != events || other.AckedCount() != events || other.Answers()["accept"] != events {
		t.Errorf("the other Trigger: %s, %v answers; want %d events, each once", o, other.Answers(), events)
	}
	if strings.Contains(k.Log(), `{"n":1}`) {
		t.Errorf("the runtime logged event data:\n%s", k.Log())
	}
}

// TestOverfilledKeptLettersStore keeps more than the store of kept
// letters holds: the oldest are evicted and counted, the ingress answers
// 202 throughout, and the accounting balances exactly.
func TestOverfilledKeptLettersStore(t *testing.T) {
	const events = 300
	sub := rig.NewSubscriber(t)
	sub.SetBehaviour(rig.Always(rig.Reject))
	admin := "http://" + freeAddr(t)
	k := rig.StartKnc(t, kncBinary, rig.Table(rig.Broker("b", rig.Trigger("rejecting", sub.URL(), nil))),
		"--admin-addr", strings.TrimPrefix(admin, "http://"), "--kept-max-bytes", "32768")
	sendEvents(t, k.BrokerURL(rig.Namespace, "b"), events, "e")
	var a rig.Accounting
	rig.Eventually(t, 60*time.Second, "every delivery to be kept, and the accounting to balance", func() bool {
		var err error
		a, err = rig.ReadAccounting(admin, "rejecting")
		return err == nil && a.Kept == events && a.Balanced()
	})
	if a.Accepted != events || a.Evicted == 0 || a.Dropped != a.Evicted {
		t.Errorf("%s; want it balanced, with kept letters evicted and nothing else dropped", a)
	}
	// Without a token file, the API serves loopback clients.
	var listed kept.ListResult
	if err := json.Unmarshal([]byte(dlq(t, admin, "list", "-o", "json")), &listed); err != nil {
		t.Fatal(err)
	}
	if float64(len(listed.Letters))+a.Evicted != events {
		t.Errorf("%d letters held + %v evicted != %d kept", len(listed.Letters), a.Evicted, events)
	}
}

// TestSIGKILLDuringReplay kills the runtime while it replays 200 kept
// letters, restarts it on the same data directory and replays again:
// every event reaches the fixed subscriber, and no more are duplicated
// than could be in flight when it was killed.
func TestSIGKILLDuringReplay(t *testing.T) {
	const events = 200
	sub := rig.NewSubscriber(t)
	sub.SetBehaviour(rig.Always(rig.Reject))
	admin := "http://" + freeAddr(t)
	k := rig.StartKnc(t, kncBinary, rig.Table(rig.Broker("b", rig.Trigger("fixable", sub.URL(), nil))),
		"--admin-addr", strings.TrimPrefix(admin, "http://"))
	sendEvents(t, k.BrokerURL(rig.Namespace, "b"), events, "e")
	rig.Eventually(t, 60*time.Second, "every delivery to be kept", func() bool {
		a, err := rig.ReadAccounting(admin, "fixable")
		return err == nil && a.Kept == events
	})

	sub.SetBehaviour(rig.Always(rig.Accept))
	sub.SetDelay(5 * time.Millisecond)
	replay := exec.Command(kncBinary, "dlq", "replay", "--admin", admin, "--trigger", "fixable", "--rate", "100")
	if err := replay.Start(); err != nil {
		t.Fatal(err)
	}
	rig.Eventually(t, 60*time.Second, "a part of the replay to be delivered", func() bool { return sub.AckedCount() >= 30 })
	k.Kill()
	_ = replay.Wait() // its connection is gone with the runtime
	if n := sub.AckedCount(); n == events {
		t.Fatalf("the replay was over before the runtime was killed; nothing was tested")
	}
	k.Start()
	out := dlq(t, admin, "replay", "--trigger", "fixable", "--rate", "0")
	t.Logf("replay after the restart: %s", out[strings.LastIndexByte(strings.TrimSpace(out), '\n')+1:])
	rig.Eventually(t, 60*time.Second, "every event to reach the fixed subscriber", func() bool { return sub.AckedCount() == events })
	dup := 0
	for _, n := range sub.Acked() {
		dup += n - 1
	}
	// In flight at the kill: the attempts of the dispatch stage
	// (--delivery-concurrency), whose acknowledgements may be lost.
	if dup > 128 {
		t.Errorf("%d duplicates, more than could be in flight", dup)
	}
	t.Logf("%d of %d events delivered twice", dup, events)
}
