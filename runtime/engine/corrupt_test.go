package engine

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knc-dev/knc/internal/routing"
)

// TestCorruptBlocksAreCounted stores events that cannot be delivered yet,
// stops the runtime, damages the JetStream message blocks in its data
// directory, and starts it again: the messages JetStream could not read
// back are lost, and must be counted as dropped with reason unreadable
// instead of vanishing from the accounting.
func TestCorruptBlocksAreCounted(t *testing.T) {
	dir := t.TempDir()
	tr := leaveDeliveriesPending(t, dir, 50)

	damaged := damageBlocks(t, dir)
	if damaged == 0 {
		t.Fatal("no message block to damage: the test proves nothing")
	}

	second := startEngine(t, Options{Table: brokerTable(tr), DataDir: dir})
	eventually(t, 10*time.Second, "lost messages to be counted as unreadable", func() bool {
		return testutilCounterWith(second, "knc_events_dropped_total", "reason", "unreadable") > 0
	})
	t.Logf("%d blocks damaged; %v messages counted unreadable", damaged, testutilCounterWith(second, "knc_events_dropped_total", "reason", "unreadable"))
}

// TestCleanRestartCountsNoLoss restarts a runtime with deliveries pending
// and files intact: nothing may be counted unreadable.
func TestCleanRestartCountsNoLoss(t *testing.T) {
	dir := t.TempDir()
	tr := leaveDeliveriesPending(t, dir, 20)
	second := startEngine(t, Options{Table: brokerTable(tr), DataDir: dir})
	if n := testutilCounterWith(second, "knc_events_dropped_total", "reason", "unreadable"); n != 0 {
		t.Errorf("%v messages counted unreadable after a clean restart", n)
	}
}

// leaveDeliveriesPending runs a runtime on dir whose one Trigger fails
// every attempt and retries only after an hour, sends it events, and shuts
// it down once each had its first attempt: every delivery is left pending
// in dir's streams. It returns the Trigger, to serve dir again with.
func leaveDeliveriesPending(t *testing.T, dir string, events int) routing.Trigger {
	return leaveDeliveriesPendingFor(t, dir, events, time.Hour)
}

// leaveDeliveriesPendingFor is leaveDeliveriesPending with the Trigger's
// retry delay.
func leaveDeliveriesPendingFor(t *testing.T, dir string, events int, retryDelay time.Duration) routing.Trigger {
	t.Helper()
	sub := newRecorder(t)
	sub.respond = func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(http.StatusInternalServerError) }
	tr := trigger("failing", sub.srv.URL, nil)
	tr.Delivery = &routing.Delivery{Retry: 100, BackoffPolicy: routing.BackoffLinear, BackoffDelay: routing.Duration(retryDelay)}
	first, err := New(Options{Table: brokerTable(tr), DataDir: dir, HTTPAddr: "127.0.0.1:0", Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := first.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range events {
		if code := post(t, first.URL()+"/brokers/ns/b", fmt.Sprint("e-", i), "t"); code != http.StatusAccepted {
			t.Fatalf("POST = %d", code)
		}
	}
	eventually(t, 10*time.Second, "a first attempt of every event", func() bool { return sub.count() >= events })
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestDamagedBlockAccountingBalances is the reproducer of a damaged block
// losing about half of the pending deliveries without a count: after the
// restart every accepted delivery is either delivered or counted dropped
// with reason unreadable, so accepted = delivered + dropped holds exactly
// across the restart.
func TestDamagedBlockAccountingBalances(t *testing.T) {
	const events = 200
	dir := t.TempDir()
	// A short retry delay: the second runtime retries what was pending soon
	// after it starts, instead of an hour later.
	tr := leaveDeliveriesPendingFor(t, dir, events, 3*time.Second)
	if damageBlocks(t, dir) == 0 {
		t.Fatal("no message block to damage: the test proves nothing")
	}

	// The subscriber is fixed, and the Trigger retries at once.
	sub := newRecorder(t)
	tr.Subscriber = routing.Destination{URI: sub.srv.URL}
	tr.Delivery = nil
	second := startEngine(t, Options{Table: brokerTable(tr), DataDir: dir})
	defer func() {
		t.Logf("delivered %v, events unreadable %v, deliveries unreadable %v, redelivered %v", testutilCounter(second, "knc_deliveries_delivered_total"), testutilCounterWith(second, "knc_events_dropped_total", "reason", "unreadable"), testutilCounterWith(second, "knc_deliveries_dropped_total", "reason", "unreadable"), sub.count())
	}()
	settled := func() float64 {
		return testutilCounter(second, "knc_deliveries_delivered_total") +
			testutilCounterWith(second, "knc_events_dropped_total", "reason", "unreadable") +
			testutilCounterWith(second, "knc_deliveries_dropped_total", "reason", "unreadable")
	}
	eventually(t, 60*time.Second, "every accepted delivery to be delivered or counted lost", func() bool {
		return settled() >= events
	})
	delivered := testutilCounter(second, "knc_deliveries_delivered_total")
	unreadable := settled() - delivered
	t.Logf("accepted %d: delivered %v, counted unreadable %v", events, delivered, unreadable)
	if delivered+unreadable != events {
		t.Errorf("accepted %d != delivered %v + unreadable %v", events, delivered, unreadable)
	}
	if unreadable == 0 {
		t.Errorf("no delivery counted unreadable: the damage lost nothing, so the test proves nothing")
	}
}

// damageBlocks overwrites the second half of every JetStream message block
// of dir's streams, as a torn or rotten write would: the records there fail
// their checksums. It returns how many blocks it damaged.
func damageBlocks(t *testing.T, dir string) int {
	t.Helper()
	damaged := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".blk") || !strings.Contains(path, "streams") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil || len(b) < 64 {
			return err
		}
		// Overwrite the second half of the block, as a torn or rotten write
		// would: the records there fail their checksums.
		for i := len(b) / 2; i < len(b); i++ {
			b[i] ^= 0x5a
		}
		damaged++
		return os.WriteFile(path, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return damaged
}
