package cluster3

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/runtime/kept"
	"github.com/knc-dev/knc/test/rig"
)

const adminToken = "cluster3-admin-token"

// TestKeptLettersOnExternalNATS runs a runtime on the external NATS
// cluster with R3 streams and a subscriber that refuses every event of a
// Trigger without a dead-letter sink: the letters are listed with knc dlq,
// still listed after the runtime is stopped and started again, and
// replayed by filter to the fixed subscriber. Their stream is one of the
// external cluster's, replicated on its three servers.
func TestKeptLettersOnExternalNATS(t *testing.T) {
	const events = 20
	cluster := startNATSCluster(t)
	urls := strings.Join(cluster.urls, ",")
	sub := rig.NewSubscriber(t)
	sub.SetBehaviour(rig.Always(rig.Reject))
	table := rig.Table(rig.Broker("b", rig.Trigger("fixable", sub.URL(), nil)))
	tokens := t.TempDir()
	if err := os.WriteFile(filepath.Join(tokens, "admin"), []byte(adminToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	adminAddr := freeAddr(t)
	admin := "http://" + adminAddr
	k := rig.StartKnc(t, kncBinary, table, "--nats-url", urls, "--stream-replicas", "3",
		"--admin-addr", adminAddr, "--bearer-tokens", tokens)

	var ids []string
	for i := range events {
		ids = append(ids, fmt.Sprint("e", i))
	}
	for _, id := range ids {
		sendEvent(t, k.BrokerURL(rig.Namespace, "b"), id)
	}
	rig.Eventually(t, 60*time.Second, fmt.Sprintf("%d kept letters", events), func() bool {
		a, err := rig.ReadAccounting(admin, "fixable")
		return err == nil && a.Kept == events
	})
	before := listLetters(t, admin, ids)

	// The letters are on the external servers: a client of theirs finds
	// the stream, with a copy on each of the three.
	js := jetStreamOf(t, urls)
	info := streamInfo(t, js, kept.StreamName(rig.Namespace))
	if info.Config.Replicas != 3 || info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
		t.Errorf("stream %s on the external cluster: %d replicas, cluster %+v; want 3 copies, a leader and two followers",
			info.Config.Name, info.Config.Replicas, info.Cluster)
	}
	if info.State.Msgs != events {
		t.Errorf("stream %s on the external cluster holds %d messages, want the %d letters", info.Config.Name, info.State.Msgs, events)
	}

	k.Terminate()
	k.Start()
	after := listLetters(t, admin, ids)
	if !slices.Equal(after, before) {
		t.Errorf("letters after the restart %v, want those before it %v", after, before)
	}

	sub.SetBehaviour(rig.Always(rig.Accept))
	out := dlq(t, admin, "replay", "--trigger", "fixable", "--reason", kept.ReasonNoDeadLetterSink, "--rate", "0")
	if !strings.Contains(out, fmt.Sprintf("replayed %d, skipped 0", events)) {
		t.Fatalf("replay printed:\n%s", out)
	}
	rig.Eventually(t, 60*time.Second, "the fixed subscriber to acknowledge every event", func() bool { return rig.AllAcked(sub, ids) })
	if n := sub.AckedCount(); n != events {
		t.Errorf("the subscriber acknowledged %d distinct events, want %d", n, events)
	}
	// The replayed marks went to the external stream too: a second
	// replay finds every letter replayed.
	if out := dlq(t, admin, "replay", "--trigger", "fixable", "--rate", "0"); !strings.Contains(out, fmt.Sprintf("replayed 0, skipped %d", events)) {
		t.Errorf("a second replay printed:\n%s", out)
	}
}

// listLetters lists the letters of Trigger fixable with knc dlq, checks
// that they are the letters of the events ids, refused with a 400 and
// kept for having no dead-letter sink, and returns their IDs.
func listLetters(t *testing.T, admin string, ids []string) []string {
	t.Helper()
	var listed kept.ListResult
	if err := json.Unmarshal([]byte(dlq(t, admin, "list", "--trigger", "fixable", "-o", "json")), &listed); err != nil {
		t.Fatal(err)
	}
	var letters, events []string
	for _, l := range listed.Letters {
		if l.Reason != kept.ReasonNoDeadLetterSink || l.Status != http.StatusBadRequest || l.TargetKind != "Trigger" || l.Target != "fixable" {
			t.Errorf("letter %s: %s %s kept for %q with status %d; want Trigger fixable, %q, 400",
				l.ID, l.TargetKind, l.Target, l.Reason, l.Status, kept.ReasonNoDeadLetterSink)
		}
		letters = append(letters, l.ID)
		events = append(events, l.Event.ID)
	}
	slices.Sort(events)
	want := slices.Sorted(slices.Values(ids))
	if !slices.Equal(events, want) {
		t.Fatalf("knc dlq list lists the letters of events %v, want %v", events, want)
	}
	return letters
}

// dlq runs knc dlq against admin with the token and returns its stdout.
func dlq(t *testing.T, admin string, args ...string) string {
	t.Helper()
	return rig.DLQ(t, kncBinary, admin, adminToken, args[0], args[1:]...)
}

func sendEvent(t *testing.T, url, id string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Ce-Specversion", "1.0")
	req.Header.Set("Ce-Id", id)
	req.Header.Set("Ce-Source", "/cluster3")
	req.Header.Set("Ce-Type", "t")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("event %s: status %d, want 202", id, resp.StatusCode)
	}
}

// jetStreamOf is a JetStream client of the servers at urls.
func jetStreamOf(t *testing.T, urls string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(urls)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func streamInfo(t *testing.T, js jetstream.JetStream, name string) *jetstream.StreamInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatalf("stream %s on the external cluster: %v", name, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

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
