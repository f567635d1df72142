package engine

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/tracing"
)

// A client's trace context, as a traced sender would put it on a request.
const (
	clientTraceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpanID      = "00f067aa0ba902b7"
	clientTraceparent = "00-" + clientTraceID + "-" + clientSpanID + "-01"
)

// spanLog collects the spans a Tracer ends, as they end.
type spanLog struct {
	exp *tracetest.InMemoryExporter
}

func newSpanLog(t *testing.T) (*spanLog, *tracing.Tracer) {
	exp := tracetest.NewInMemoryExporter()
	tr := tracing.NewProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return &spanLog{exp: exp}, tr
}

// named returns the spans whose name starts with prefix, in the order
// they ended.
func (l *spanLog) named(prefix string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range l.exp.GetSpans() {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, s)
		}
	}
	return out
}

func (l *spanLog) waitFor(t *testing.T, prefix string, n int) []tracetest.SpanStub {
	t.Helper()
	eventually(t, 15*time.Second, fmt.Sprintf("%d %q spans", n, prefix), func() bool { return len(l.named(prefix)) >= n })
	return l.named(prefix)
}

func attrOf(s tracetest.SpanStub, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// traceparentOf returns the span context a request's traceparent names.
func traceparentOf(t *testing.T, h http.Header) trace.SpanContext {
	t.Helper()
	v := h.Get("Traceparent")
	parts := strings.Split(v, "-")
	if len(parts) != 4 {
		t.Fatalf("traceparent %q is not a W3C trace context", v)
	}
	tid, err1 := trace.TraceIDFromHex(parts[1])
	sid, err2 := trace.SpanIDFromHex(parts[2])
	if err1 != nil || err2 != nil {
		t.Fatalf("traceparent %q: %v %v", v, err1, err2)
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid})
}

// headerOf returns the headers of the i-th request received.
func (r *recorder) headerOf(i int) http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events[i].header
}

func checkChild(t *testing.T, child, parent tracetest.SpanStub) {
	t.Helper()
	if child.Parent.SpanID() != parent.SpanContext.SpanID() || child.SpanContext.TraceID() != parent.SpanContext.TraceID() {
		t.Errorf("span %q has parent %s in trace %s, want %q (%s) in trace %s",
			child.Name, child.Parent.SpanID(), child.SpanContext.TraceID(), parent.Name, parent.SpanContext.SpanID(), parent.SpanContext.TraceID())
	}
}

func postTraced(t *testing.T, url, id, traceparent string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Ce-Specversion": "1.0", "Ce-Id": id, "Ce-Source": "/test", "Ce-Type": "t", "Content-Type": "application/json"} {
		req.Header.Set(k, v)
	}
	if traceparent != "" {
		req.Header.Set("Traceparent", traceparent)
		req.Header.Set("Tracestate", "vendor=1")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST = %d", resp.StatusCode)
	}
}

// TestTracingParentChain checks the chain a traced sender sees: its span,
// the ingress span, the route span, the attempt span, and the subscriber's
// request carrying the attempt span's context.
func TestTracingParentChain(t *testing.T) {
	spans, tr := newSpanLog(t)
	sub := newRecorder(t)
	e := startEngine(t, Options{Table: brokerTable(trigger("t1", sub.srv.URL, nil)), Tracer: tr})
	postTraced(t, e.URL()+"/brokers/ns/b", "e1", clientTraceparent)
	attempt := spans.waitFor(t, "deliver ", 1)[0]
	ingress := spans.named("ingress ")[0]
	route := spans.named("route ")[0]

	if got := ingress.Parent.TraceID().String(); got != clientTraceID {
		t.Errorf("ingress span in trace %s, want the client's %s", got, clientTraceID)
	}
	if got := ingress.Parent.SpanID().String(); got != clientSpanID {
		t.Errorf("ingress span's parent = %s, want the client's span %s", got, clientSpanID)
	}
	checkChild(t, route, ingress)
	checkChild(t, attempt, route)

	got := traceparentOf(t, sub.headerOf(0))
	if got.TraceID() != attempt.SpanContext.TraceID() || got.SpanID() != attempt.SpanContext.SpanID() {
		t.Errorf("the subscriber got traceparent %s, want the attempt span's %s", sub.headerOf(0).Get("Traceparent"), attempt.SpanContext.SpanID())
	}
	if ts := sub.headerOf(0).Get("Tracestate"); ts != "vendor=1" {
		t.Errorf("the subscriber got tracestate %q, want the client's vendor=1", ts)
	}

	for _, c := range []struct {
		span tracetest.SpanStub
		key  attribute.Key
		want string
	}{
		{ingress, "knc.broker", "ns/b"},
		{ingress, "cloudevents.event_id", "e1"},
		{ingress, "messaging.operation.type", "receive"},
		{route, "messaging.destination.name", "ns/b"},
		{attempt, "knc.trigger", "ns/t1"},
		{attempt, "knc.broker", "ns/b"},
		{attempt, "cloudevents.event_type", "t"},
		{attempt, "messaging.operation.type", "send"},
	} {
		if got := attrOf(c.span, c.key).String(); got != c.want {
			t.Errorf("span %q: %s = %q, want %q", c.span.Name, c.key, got, c.want)
		}
	}
	if code := attrOf(ingress, "http.response.status_code").AsInt64(); code != http.StatusAccepted {
		t.Errorf("ingress span: http.response.status_code = %d, want 202", code)
	}
	if code := attrOf(attempt, "http.response.status_code").AsInt64(); code != http.StatusAccepted {
		t.Errorf("attempt span: http.response.status_code = %d, want 202", code)
	}
	if n := attrOf(route, "knc.route.matched").AsInt64(); n != 1 {
		t.Errorf("route span: knc.route.matched = %d, want 1", n)
	}
	if ingress.SpanKind != trace.SpanKindServer || attempt.SpanKind != trace.SpanKindClient {
		t.Errorf("span kinds: ingress %s, attempt %s; want server, client", ingress.SpanKind, attempt.SpanKind)
	}
}

// TestTracingExtensionParent checks that an event in structured mode whose
// request has no traceparent header is traced from its CloudEvents
// distributed-tracing extension, which reaches the subscriber unchanged.
func TestTracingExtensionParent(t *testing.T) {
	spans, tr := newSpanLog(t)
	sub := newRecorder(t)
	e := startEngine(t, Options{Table: brokerTable(trigger("t1", sub.srv.URL, nil)), Tracer: tr})
	body := `{"specversion":"1.0","id":"x1","source":"/s","type":"t","traceparent":"` + clientTraceparent + `","data":{"n":1}}`
	resp, err := http.Post(e.URL()+"/brokers/ns/b", "application/cloudevents+json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST = %d", resp.StatusCode)
	}
	attempt := spans.waitFor(t, "deliver ", 1)[0]
	ingress := spans.named("ingress ")[0]
	if ingress.Parent.SpanID().String() != clientSpanID || ingress.Parent.TraceID().String() != clientTraceID {
		t.Errorf("ingress span's parent = %s in trace %s, want the extension's %s in %s", ingress.Parent.SpanID(), ingress.Parent.TraceID(), clientSpanID, clientTraceID)
	}
	if got := traceparentOf(t, sub.headerOf(0)); got.SpanID() != attempt.SpanContext.SpanID() {
		t.Errorf("the subscriber got traceparent span %s, want the attempt's %s", got.SpanID(), attempt.SpanContext.SpanID())
	}
	if got := sub.headerOf(0).Get("Ce-Traceparent"); got != clientTraceparent {
		t.Errorf("the event's traceparent extension reached the subscriber as %q, want it unchanged, %q", got, clientTraceparent)
	}
}

// TestTracingRetriesAndDeadLetter checks that each attempt has a span of
// its own, children of the route span, and that the dead-letter attempt is
// marked and follows the last failed attempt.
func TestTracingRetriesAndDeadLetter(t *testing.T) {
	spans, tr := newSpanLog(t)
	sub := newRecorder(t)
	sub.respond = func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(http.StatusServiceUnavailable) }
	dls := newRecorder(t)
	tg := trigger("t1", sub.srv.URL, nil)
	tg.Delivery = &routing.Delivery{Retry: 2, BackoffPolicy: routing.BackoffLinear, BackoffDelay: routing.Duration(50 * time.Millisecond),
		DeadLetterSink: &routing.Destination{URI: dls.srv.URL}}
	e := startEngine(t, Options{Table: brokerTable(tg), Tracer: tr})
	postTraced(t, e.URL()+"/brokers/ns/b", "e1", clientTraceparent)

	dead := spans.waitFor(t, "dead-letter ", 1)[0]
	attempts := spans.named("deliver ")
	route := spans.named("route ")[0]
	if len(attempts) != 3 {
		t.Fatalf("%d attempt spans, want 3 (1 + retry 2)", len(attempts))
	}
	for i, a := range attempts {
		checkChild(t, a, route)
		if n := attrOf(a, "knc.delivery.attempt").AsInt64(); n != int64(i+1) {
			t.Errorf("attempt span %d: knc.delivery.attempt = %d", i+1, n)
		}
		if a.Status.Code != codes.Error {
			t.Errorf("attempt span %d: status %v, want an error", i+1, a.Status)
		}
		if got := traceparentOf(t, sub.headerOf(i)); got.SpanID() != a.SpanContext.SpanID() {
			t.Errorf("request %d carried span %s, want its attempt span's %s", i+1, got.SpanID(), a.SpanContext.SpanID())
		}
		if attrOf(a, "knc.delivery.dead_letter").AsBool() {
			t.Errorf("attempt span %d is marked as a dead-letter attempt", i+1)
		}
	}
	if n := attrOf(attempts[2], "http.request.resend_count").AsInt64(); n != 2 {
		t.Errorf("third attempt: http.request.resend_count = %d, want 2", n)
	}
	checkChild(t, dead, attempts[2])
	if !attrOf(dead, "knc.delivery.dead_letter").AsBool() {
		t.Error("the dead-letter attempt's span is not marked knc.delivery.dead_letter")
	}
	if dead.Status.Code == codes.Error {
		t.Errorf("dead-letter span: status %v, want no error", dead.Status)
	}
	eventually(t, 5*time.Second, "the dead letter", func() bool { return dls.count() == 1 })
	if got := traceparentOf(t, dls.headerOf(0)); got.SpanID() != dead.SpanContext.SpanID() {
		t.Errorf("the dead-letter sink got span %s, want the dead-letter span's %s", got.SpanID(), dead.SpanContext.SpanID())
	}
}

// TestTracingAcrossRestart checks that a delivery stored before a restart
// is attempted after it as a child of the route span of the process that
// stored it: the context travels in the stored headers.
func TestTracingAcrossRestart(t *testing.T) {
	var mu sync.Mutex
	failing := true
	sub := newRecorder(t)
	sub.respond = func(w http.ResponseWriter, _ *http.Request, _ int) {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}
	tg := trigger("t1", sub.srv.URL, nil)
	tg.Delivery = &routing.Delivery{Retry: 3, BackoffPolicy: routing.BackoffLinear, BackoffDelay: routing.Duration(500 * time.Millisecond)}
	dir := t.TempDir()

	spans1, tr1 := newSpanLog(t)
	first, err := New(Options{Table: brokerTable(tg), DataDir: dir, HTTPAddr: "127.0.0.1:0", Logger: testLogger(t), Tracer: tr1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := first.Start(ctx); err != nil {
		t.Fatal(err)
	}
	postTraced(t, first.URL()+"/brokers/ns/b", "e1", clientTraceparent)
	spans1.waitFor(t, "deliver ", 1)
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	route := spans1.named("route ")[0]
	mu.Lock()
	failing = false
	mu.Unlock()

	spans2, tr2 := newSpanLog(t)
	startEngine(t, Options{Table: brokerTable(tg), DataDir: dir, Tracer: tr2})
	attempts := spans2.waitFor(t, "deliver ", 1)
	last := attempts[len(attempts)-1]
	checkChild(t, last, route)
	if last.Status.Code == codes.Error {
		t.Errorf("the attempt after the restart: status %v, want success", last.Status)
	}
	if n := attrOf(last, "knc.delivery.attempt").AsInt64(); n < 2 {
		t.Errorf("the attempt after the restart is numbered %d, want 2 or more", n)
	}
}

// TestTracingReply checks that a Trigger's reply is routed as a child of
// the reply span, itself a child of the attempt that received it.
func TestTracingReply(t *testing.T) {
	spans, tr := newSpanLog(t)
	replier := newRecorder(t)
	replier.respond = func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.Header().Set("Ce-Specversion", "1.0")
		w.Header().Set("Ce-Id", "r1")
		w.Header().Set("Ce-Source", "/replier")
		w.Header().Set("Ce-Type", "reply")
		w.WriteHeader(http.StatusOK)
	}
	sink := newRecorder(t)
	e := startEngine(t, Options{Table: brokerTable(
		trigger("ask", replier.srv.URL, map[string]string{"type": "t"}),
		trigger("answer", sink.srv.URL, map[string]string{"type": "reply"}),
	), Tracer: tr})
	postTraced(t, e.URL()+"/brokers/ns/b", "e1", clientTraceparent)
	spans.waitFor(t, "deliver ", 2)
	// The event's route span ends after its first attempt, during which
	// the reply is stored, and may then be routed and delivered before
	// that span ends: spans are told apart by name and parent, not by the
	// order they ended in.
	routes := spans.waitFor(t, "route ", 2)
	ingress, reply := spans.named("ingress "), spans.named("reply ")
	ask, answer := spans.named("deliver ns/ask"), spans.named("deliver ns/answer")
	if len(routes) != 2 || len(ingress) != 1 || len(reply) != 1 || len(ask) != 1 || len(answer) != 1 {
		t.Fatalf("%d route, %d ingress, %d reply and %d+%d deliver spans, want 2 (the event and its reply), 1, 1 and 1+1",
			len(routes), len(ingress), len(reply), len(ask), len(answer))
	}
	eventRoute, replyRoute := routes[0], routes[1]
	if eventRoute.Parent.SpanID() == reply[0].SpanContext.SpanID() {
		eventRoute, replyRoute = replyRoute, eventRoute
	}
	checkChild(t, eventRoute, ingress[0])
	checkChild(t, ask[0], eventRoute)
	checkChild(t, reply[0], ask[0])
	checkChild(t, replyRoute, reply[0])
	checkChild(t, answer[0], replyRoute)
	if got := attrOf(reply[0], "cloudevents.event_id").String(); got != "r1" {
		t.Errorf("reply span: cloudevents.event_id = %q, want r1", got)
	}
}

// TestTracingSubscriptionReply checks a Channel's spans: the attempt to a
// Subscription's subscriber, and the reply sent to its reply destination
// as a child of that attempt, the destination getting the reply span's
// context.
func TestTracingSubscriptionReply(t *testing.T) {
	spans, tr := newSpanLog(t)
	replier := newRecorder(t)
	replier.respond = func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.Header().Set("Ce-Specversion", "1.0")
		w.Header().Set("Ce-Id", "r1")
		w.Header().Set("Ce-Source", "/replier")
		w.Header().Set("Ce-Type", "reply")
		w.WriteHeader(http.StatusOK)
	}
	dest := newRecorder(t)
	table := &routing.Table{APIVersion: routing.APIVersion, Kind: routing.Kind, Channels: []routing.Channel{{
		Source: routing.Source{Namespace: "ns", Name: "c"},
		Path:   routing.ChannelPath("ns", "c"),
		Subscriptions: []routing.Subscription{{
			Source:     routing.Source{Namespace: "ns", Name: "s"},
			Subscriber: &routing.Destination{URI: replier.srv.URL},
			Reply:      &routing.Destination{URI: dest.srv.URL},
		}},
	}}}
	e := startEngine(t, Options{Table: table, Tracer: tr})
	postTraced(t, e.URL()+"/channels/ns/c", "e1", clientTraceparent)
	reply := spans.waitFor(t, "reply ", 1)[0]
	attempt := spans.named("deliver ")[0]
	route := spans.named("route ")[0]
	checkChild(t, route, spans.named("ingress ")[0])
	checkChild(t, attempt, route)
	checkChild(t, reply, attempt)
	for _, c := range []struct {
		span tracetest.SpanStub
		key  attribute.Key
		want string
	}{
		{route, "knc.channel", "ns/c"},
		{attempt, "knc.subscription", "ns/s"},
		{reply, "knc.subscription", "ns/s"},
		{reply, "cloudevents.event_id", "r1"},
		{reply, "url.full", dest.srv.URL},
	} {
		if got := attrOf(c.span, c.key).String(); got != c.want {
			t.Errorf("span %q: %s = %q, want %q", c.span.Name, c.key, got, c.want)
		}
	}
	if reply.SpanKind != trace.SpanKindClient {
		t.Errorf("reply span kind %s, want client", reply.SpanKind)
	}
	if got := traceparentOf(t, dest.headerOf(0)); got.SpanID() != reply.SpanContext.SpanID() {
		t.Errorf("the reply destination got span %s, want the reply span's %s", got.SpanID(), reply.SpanContext.SpanID())
	}
}
