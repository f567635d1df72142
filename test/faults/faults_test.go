package faults

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knc-dev/knc/test/rig"
)

func to(urls ...string) func() []string { return func() []string { return urls } }

// checkAccounting waits until the runtime's accounting of target balances,
// records it in f, and checks it against what the subscribers saw: each
// accepted event matched the target once, so the runtime accepted at least
// as many deliveries, and counted at least as many delivered as were seen.
func checkAccounting(t *testing.T, k *rig.Knc, target string, f *rig.Figures) rig.Accounting {
	t.Helper()
	var a rig.Accounting
	rig.Eventually(t, 30*time.Second, "the accounting of "+target+" to balance", func() bool {
		var err error
		a, err = rig.ReadAccounting(k.URL(), target)
		return err == nil && a.Balanced() && a.Accepted >= float64(f.Accepted)
	})
	f.Metrics["accepted"] = a.Accepted
	f.Metrics["delivered"] = a.Delivered
	f.Metrics["dead-lettered"] = a.DeadLettered
	f.Metrics["kept"] = a.Kept
	f.Metrics["dropped"] = a.Dropped
	if a.Delivered < float64(f.Delivered) {
		t.Errorf("%s: %v counted delivered, but the subscriber acknowledged %d distinct events", target, a.Delivered, f.Delivered)
	}
	if a.DeadLettered < float64(f.DeadLettered) {
		t.Errorf("%s: %v counted dead-lettered, but the sink acknowledged %d distinct events", target, a.DeadLettered, f.DeadLettered)
	}
	return a
}

// TestFlakySubscriber delivers to a subscriber that fails half of its
// requests at random: 500, 429 with Retry-After, no answer until the
// attempt times out, and connection resets. Twelve retries make every
// event arrive; what still fails goes to the dead-letter sink.
func TestFlakySubscriber(t *testing.T) {
	sub := rig.NewSubscriber(t)
	sub.SetBehaviour(rig.Flaky(1, map[rig.Answer]int{rig.Accept: 10, rig.Fail: 4, rig.Overloaded: 2, rig.Hang: 1, rig.Reset: 3}))
	sink := rig.NewSubscriber(t)
	k := rig.StartKnc(t, kncBinary, rig.Table(rig.Broker("b",
		rig.Trigger("flaky", sub.URL(), rig.Retrying(12, 20*time.Millisecond, 300*time.Millisecond, sink.URL())))))

	l := rig.StartLoad(rig.LoadConfig{Targets: to(k.BrokerURL(rig.Namespace, "b")), Senders: 8, Rate: 400})
	l.WaitAccepted(t, 1500, 30*time.Second)
	l.Stop()
	f := rig.Settle(45*time.Second, func() rig.Figures { return rig.Reconcile(l, []*rig.Subscriber{sub}, sink) })
	a := checkAccounting(t, k, "flaky", &f)
	f.Report(t)
	t.Logf("subscriber answers: %v", sub.Answers())
	if a.Dropped != 0 {
		t.Errorf("%v deliveries dropped with a dead-letter sink that accepts everything", a.Dropped)
	}
	if a.Accepted != float64(f.Accepted) {
		t.Errorf("%v deliveries accepted for %d events accepted, without a crash or a reload", a.Accepted, f.Accepted)
	}
}

// TestRepeatedSIGKILL kills the runtime with SIGKILL three times while
// events pour in and a slow subscriber leaves a backlog, restarting it on
// the same data directory each time: with file durability and one ingress
// stream, and with fsync durability, whose ingress shards take turns to
// commit.
func TestRepeatedSIGKILL(t *testing.T) {
	for _, mode := range []struct {
		name string
		args []string
		// serving is what the runtime logs of its mode when it starts.
		serving string
	}{
		{name: "file", serving: "durability=file ingress_shards=1"},
		{name: "fsync with 4 shards", args: []string{"--durability", "fsync", "--ingress-shards", "4"}, serving: "durability=fsync ingress_shards=4"},
	} {
		t.Run(mode.name, func(t *testing.T) { testRepeatedSIGKILL(t, mode.serving, mode.args...) })
	}
}

func testRepeatedSIGKILL(t *testing.T, serving string, args ...string) {
	sub := rig.NewSubscriber(t)
	// Slower than the ingress, so that a backlog is stored at each kill.
	sub.SetConcurrency(4)
	sub.SetDelay(5 * time.Millisecond)
	k := rig.StartKnc(t, kncBinary, rig.Table(rig.Broker("b",
		rig.Trigger("t", sub.URL(), rig.Retrying(10, 50*time.Millisecond, time.Second, "")))), args...)
	if !strings.Contains(k.Log(), serving) {
		t.Fatalf("the runtime does not log %q when it starts:\n%s", serving, k.Log())
	}
	// The URL changes with each restart; the load follows it.
	var url atomic.Pointer[string]
	set := func() { u := k.BrokerURL(rig.Namespace, "b"); url.Store(&u) }
	set()
	l := rig.StartLoad(rig.LoadConfig{Targets: func() []string { return []string{*url.Load()} }, Senders: 8})
	backlogs := []int{}
	unreadable := 0.0
	for kill := range 3 {
		l.WaitAccepted(t, (kill+1)*600, 30*time.Second)
		k.Kill()
		backlogs = append(backlogs, l.AcceptedCount()-sub.AckedCount())
		k.Start()
		set()
		// A SIGKILL leaves JetStream's files whole: a restart must not
		// count any message as unreadable.
		n, err := rig.Metric(k.URL(), "knc_events_dropped_total", map[string]string{"reason": "unreadable"})
		if err != nil {
			t.Fatal(err)
		}
		unreadable += n
	}
	if unreadable != 0 {
		t.Errorf("%v messages counted unreadable after SIGKILLs that damaged no file", unreadable)
	}
	l.WaitAccepted(t, 4*600, 30*time.Second)
	l.Stop()
	f := rig.Settle(45*time.Second, func() rig.Figures { return rig.Reconcile(l, []*rig.Subscriber{sub}, nil) })
	f.Metrics["processes"] = float64(k.Starts)
	f.Report(t)
	t.Logf("accepted but not yet delivered at each SIGKILL: %v", backlogs)
	if backlogs[0] <= 0 && backlogs[1] <= 0 && backlogs[2] <= 0 {
		t.Error("no backlog at any SIGKILL: the test proves nothing")
	}
}

// TestStoreFull caps the JetStream store while the subscriber is down, so
// that it fills up: the ingress then answers 503 and never 202 for an event
// it could not store. Once the subscriber is back, every event answered 202
// is delivered and the ingress accepts events again.
func TestStoreFull(t *testing.T) {
	sub := rig.NewSubscriber(t)
	sub.SetBehaviour(rig.Always(rig.Fail))
	k := rig.StartKnc(t, kncBinary, rig.Table(rig.Broker("b",
		rig.Trigger("t", sub.URL(), rig.Retrying(1000, 200*time.Millisecond, time.Second, "")))),
		"--max-store-bytes", "2097152")
	l := rig.StartLoad(rig.LoadConfig{Targets: to(k.BrokerURL(rig.Namespace, "b")), Senders: 4, BodyBytes: 4 << 10})
	rig.Eventually(t, 30*time.Second, "the ingress to refuse events", func() bool {
		return l.Codes()[http.StatusServiceUnavailable] >= 50
	})
	l.Stop()
	full := l.Codes()
	if full[http.StatusAccepted] == 0 {
		t.Fatal("nothing was accepted before the store was full")
	}
	for code, n := range full {
		if code != http.StatusAccepted && code != http.StatusServiceUnavailable {
			t.Errorf("%d answers %d with the store full, want only 202 and 503", n, code)
		}
	}

	sub.SetBehaviour(rig.Always(rig.Accept))
	f := rig.Settle(45*time.Second, func() rig.Figures { return rig.Reconcile(l, []*rig.Subscriber{sub}, nil) })
	checkAccounting(t, k, "t", &f)
	f.Report(t)

	// With the backlog delivered there is room again.
	after := rig.StartLoad(rig.LoadConfig{Targets: to(k.BrokerURL(rig.Namespace, "b")), Senders: 2, Prefix: "after-", BodyBytes: 4 << 10})
	after.WaitAccepted(t, 20, 30*time.Second)
	after.Stop()
	g := rig.Settle(30*time.Second, func() rig.Figures { return rig.Reconcile(after, []*rig.Subscriber{sub}, nil) })
	if g.Lost > 0 {
		t.Errorf("after the store drained: %s", g)
	}
}

// TestDeadLetterSinkDown rejects every event at the subscriber while the
// dead-letter sink is itself down for three seconds: the dead letters are
// retried until the sink is back, and none is dropped.
func TestDeadLetterSinkDown(t *testing.T) {
	sub := rig.NewSubscriber(t)
	sub.SetBehaviour(rig.Always(rig.Reject))
	sink := rig.NewSubscriber(t)
	sink.SetBehaviour(rig.Always(rig.Fail))
	k := rig.StartKnc(t, kncBinary, rig.Table(rig.Broker("b",
		rig.Trigger("t", sub.URL(), rig.Retrying(40, 200*time.Millisecond, time.Second, sink.URL())))))
	l := rig.StartLoad(rig.LoadConfig{Targets: to(k.BrokerURL(rig.Namespace, "b")), Senders: 4, Rate: 200})
	l.WaitAccepted(t, 600, 30*time.Second)
	rig.Eventually(t, 10*time.Second, "the sink to refuse dead letters", func() bool { return sink.Answers()["fail"] > 100 })
	time.AfterFunc(3*time.Second, func() { sink.SetBehaviour(rig.Always(rig.Accept)) })
	l.WaitAccepted(t, 1000, 30*time.Second)
	l.Stop()
	f := rig.Settle(45*time.Second, func() rig.Figures { return rig.Reconcile(l, nil, sink) })
	a := checkAccounting(t, k, "t", &f)
	f.Report(t)
	t.Logf("sink answers: %v", sink.Answers())
	if a.Dropped != 0 || a.DeadLettered < float64(f.Accepted) {
		t.Errorf("accounting %s, want every one of %d deliveries dead-lettered", a, f.Accepted)
	}
}

// TestReloadUnderLoad reloads the routing table twice with SIGHUP while
// events keep coming: first adding a Trigger, then changing the first
// Trigger's subscriber and removing the second. Every accepted event
// reaches the first Trigger at its old or new subscriber.
func TestReloadUnderLoad(t *testing.T) {
	a1, a2, b := rig.NewSubscriber(t), rig.NewSubscriber(t), rig.NewSubscriber(t)
	d := rig.Retrying(10, 50*time.Millisecond, time.Second, "")
	k := rig.StartKnc(t, kncBinary, rig.Table(rig.Broker("b", rig.Trigger("a", a1.URL(), d))))
	l := rig.StartLoad(rig.LoadConfig{Targets: to(k.BrokerURL(rig.Namespace, "b")), Senders: 8, Rate: 500})
	l.WaitAccepted(t, 500, 30*time.Second)
	k.Reload(rig.Table(rig.Broker("b", rig.Trigger("a", a1.URL(), d), rig.Trigger("added", b.URL(), d))))
	rig.Eventually(t, 20*time.Second, "the added Trigger to get events", func() bool { return b.AckedCount() > 100 })
	k.Reload(rig.Table(rig.Broker("b", rig.Trigger("a", a2.URL(), d))))
	rig.Eventually(t, 20*time.Second, "the new subscriber to get events", func() bool { return a2.AckedCount() > 100 })
	l.WaitAccepted(t, l.AcceptedCount()+300, 30*time.Second)
	l.Stop()
	f := rig.Settle(45*time.Second, func() rig.Figures { return rig.Reconcile(l, []*rig.Subscriber{a1, a2}, nil) })
	checkAccounting(t, k, "a", &f)
	f.Metrics["added trigger acknowledged"] = float64(b.AckedCount())
	f.Report(t)
	if n := strings.Count(k.Log(), "reloaded the routing table"); n != 2 {
		t.Errorf("%d reloads logged, want 2", n)
	}
	if codes := l.Codes(); codes[http.StatusAccepted] != l.Sent() {
		t.Errorf("answers during the reloads: %v, want only 202", codes)
	}
}

// TestUnreachableSubscriber delivers under load to subscribers that cannot
// be reached: one whose host name does not resolve, one whose port refuses
// connections. Every attempt fails without an answer; each delivery is
// retried and dead-lettered, none lost and none dropped. The sink gets
// each event once per Trigger, which the figures count as duplicates.
func TestUnreachableSubscriber(t *testing.T) {
	sink := rig.NewSubscriber(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "http://" + ln.Addr().String() + "/"
	ln.Close()
	k := rig.StartKnc(t, kncBinary, rig.Table(rig.Broker("b",
		rig.Trigger("dns", "http://no-such-host.invalid/", rig.Retrying(2, 20*time.Millisecond, 300*time.Millisecond, sink.URL())),
		rig.Trigger("refused", refusedURL, rig.Retrying(2, 20*time.Millisecond, 300*time.Millisecond, sink.URL())))))
	l := rig.StartLoad(rig.LoadConfig{Targets: to(k.BrokerURL(rig.Namespace, "b")), Senders: 4, Rate: 200})
	l.WaitAccepted(t, 400, 30*time.Second)
	l.Stop()
	f := rig.Settle(45*time.Second, func() rig.Figures { return rig.Reconcile(l, nil, sink) })
	f.Report(t)
	for _, target := range []string{"dns", "refused"} {
		a := checkAccounting(t, k, target, &f)
		if a.Dropped != 0 || a.DeadLettered < float64(f.Accepted) {
			t.Errorf("%s: accounting %s, want every one of %d deliveries dead-lettered", target, a, f.Accepted)
		}
	}
}

// TestSecondRuntimeOnTheSameDataDir starts a second runtime on the data
// directory of one serving a load: it must refuse to start, naming the
// process that holds the directory, and the first must lose nothing.
// Before the lock, both served, and one accepted event was lost and fifty
// delivered twice.
func TestSecondRuntimeOnTheSameDataDir(t *testing.T) {
	sub := rig.NewSubscriber(t)
	k := rig.StartKnc(t, kncBinary, rig.Table(rig.Broker("b",
		rig.Trigger("t", sub.URL(), rig.Retrying(10, 50*time.Millisecond, time.Second, "")))))
	l := rig.StartLoad(rig.LoadConfig{Targets: to(k.BrokerURL(rig.Namespace, "b")), Senders: 4, Rate: 400})
	l.WaitAccepted(t, 300, 30*time.Second)

	second := exec.Command(kncBinary, "run", "--table", k.Table, "--http-addr", "127.0.0.1:0", "--data-dir", k.DataDir)
	out, err := second.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("a second runtime on %s did not fail: %v\n%s", k.DataDir, err, out)
	}
	want := fmt.Sprintf("store directory is in use: process %d holds %s", k.Pid(), filepath.Join(k.DataDir, "jetstream", "knc.lock"))
	if !strings.Contains(string(out), want) {
		t.Errorf("the second runtime said:\n%s\nwant it to say %q", out, want)
	}

	l.WaitAccepted(t, 600, 30*time.Second)
	l.Stop()
	f := rig.Settle(45*time.Second, func() rig.Figures { return rig.Reconcile(l, []*rig.Subscriber{sub}, nil) })
	f.Report(t) // fails the test when an accepted event is lost
}

// postEvent posts a binary-mode CloudEvent with id to url and returns the
// status code.
func postEvent(t *testing.T, url, id string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Ce-Specversion", "1.0")
	req.Header.Set("Ce-Id", id)
	req.Header.Set("Ce-Source", "test/faults")
	req.Header.Set("Ce-Type", "probe")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
