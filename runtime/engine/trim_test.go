package engine

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/pipeline"
)

// TestIngressStreamIsTrimmed checks that routed events leave the ingress
// stream, although it keeps acknowledged messages until they are trimmed.
func TestIngressStreamIsTrimmed(t *testing.T) {
	rec := newRecorder(t)
	e := startEngine(t, Options{Table: brokerTable(trigger("t", rec.srv.URL, map[string]string{"type": "x"}))})
	const events = 50
	for i := range events {
		if code := post(t, e.URL()+"/brokers/ns/b", fmt.Sprint(i), "x"); code != http.StatusAccepted {
			t.Fatalf("POST = %d", code)
		}
	}
	eventually(t, 10*time.Second, "every event delivered", func() bool { return rec.count() == events })
	src := e.currentPlan().ForPath("/brokers/ns/b")
	stream, err := e.js.Stream(context.Background(), src.Names().InStream)
	if err != nil {
		t.Fatal(err)
	}
	if got := stream.CachedInfo().Config.Retention; got != jetstream.LimitsPolicy {
		t.Fatalf("ingress stream retention = %v, want limits", got)
	}
	eventually(t, 10*time.Second, "an empty ingress stream", func() bool {
		info, err := stream.Info(context.Background())
		return err == nil && info.State.Msgs == 0 && info.State.LastSeq > 0
	})
}

// TestWorkQueueIngressStreamIsKept checks that an ingress stream an earlier
// version created as a work queue is served as it is: JetStream refuses to
// change that retention.
func TestWorkQueueIngressStreamIsKept(t *testing.T) {
	dir := t.TempDir()
	table := brokerTable(trigger("t", "http://127.0.0.1:1/unused", map[string]string{"type": "x"}))
	first := startEngine(t, Options{Table: table, DataDir: dir})
	names := pipeline.NamesFor(pipeline.KindBroker, routing.Source{Namespace: "ns", Name: "b"})
	ctx := context.Background()
	if err := first.js.DeleteStream(ctx, names.InStream); err != nil {
		t.Fatal(err)
	}
	if _, err := first.js.CreateStream(ctx, jetstream.StreamConfig{
		Name: names.InStream, Subjects: []string{names.In}, Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := first.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}

	rec := newRecorder(t)
	table = brokerTable(trigger("t", rec.srv.URL, map[string]string{"type": "x"}))
	second := startEngine(t, Options{Table: table, DataDir: dir})
	if code := post(t, second.URL()+"/brokers/ns/b", "1", "x"); code != http.StatusAccepted {
		t.Fatalf("POST = %d", code)
	}
	eventually(t, 10*time.Second, "the event delivered", func() bool { return rec.count() == 1 })
	stream, err := second.js.Stream(ctx, names.InStream)
	if err != nil {
		t.Fatal(err)
	}
	if got := stream.CachedInfo().Config.Retention; got != jetstream.WorkQueuePolicy {
		t.Errorf("ingress stream retention = %v, want the work queue it was created as", got)
	}
}
