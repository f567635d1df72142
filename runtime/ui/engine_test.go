package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/internal/topology/layout"
	"github.com/knc-dev/knc/runtime/engine"
	"github.com/knc-dev/knc/runtime/kept"
	"github.com/knc-dev/knc/runtime/status"
	"github.com/knc-dev/knc/runtime/ui"
)

// served is a running engine serving the page, and where to reach it.
type served struct {
	eng    *engine.Engine
	url    string // the ingress listener
	admin  string // the admin listener, url without one
	recent *ui.Recent
}

type setup struct {
	separateAdmin bool
	recentEvents  int
	// graph is the project's graph the page draws, as knc run gives it.
	graph *topology.Graph
	// noDrawing serves the page without a layout, as the runtime's own
	// binary does.
	noDrawing bool
}

// startEngine creates the engine of opts into *eng, before it starts so
// that the page's inputs, which read *eng, find it, starts it, and shuts
// it down when the test ends.
func startEngine(t testing.TB, opts engine.Options, eng **engine.Engine) {
	t.Helper()
	e, err := engine.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	*eng = e
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
}

// serve starts a real engine, with its embedded NATS server, that serves
// the page as knc run does: its inputs are the engine's table, statuses
// and registry.
func serve(t *testing.T, table *routing.Table, s setup) *served {
	t.Helper()
	reg := prometheus.NewRegistry()
	var eng *engine.Engine
	recent := ui.NewRecent(s.recentEvents)
	var draw ui.Draw = layout.WriteSVGContext
	if s.noDrawing {
		draw = nil
	}
	opts := engine.Options{
		Table:    table,
		DataDir:  t.TempDir(),
		HTTPAddr: "127.0.0.1:0",
		Registry: reg,
		UI: ui.New(ui.Inputs{
			Table:    func() *routing.Table { return eng.Table() },
			Statuses: func() []status.Report { return eng.Statuses() },
			Gatherer: reg,
			Recent:   recent,
			Interval: 20 * time.Millisecond,
			Graph: func(*routing.Table) *topology.Graph {
				return s.graph
			},
			Draw: draw,
		}),
	}
	if recent != nil {
		opts.Matched = recent
	}
	if s.separateAdmin {
		opts.AdminAddr = "127.0.0.1:0"
	}
	startEngine(t, opts, &eng)
	return &served{eng: eng, url: eng.URL(), admin: eng.AdminURL(), recent: recent}
}

// shopTable is a Broker whose Triggers deliver to a subscriber that takes
// every event, to one that refuses every event (dead-lettered after one
// retry), and, filtered, to the first; and a Channel with a Subscription.
func shopTable(ok, failing string) *routing.Table {
	dls := &routing.Destination{URI: ok + "/dead-letters"}
	return &routing.Table{
		APIVersion: routing.APIVersion, Kind: routing.Kind,
		Brokers: []routing.Broker{{
			Source: routing.Source{Namespace: "shop", Name: "default"},
			Path:   routing.BrokerPath("shop", "default"),
			Triggers: []routing.Trigger{
				{Source: routing.Source{Namespace: "shop", Name: "audit"}, Subscriber: routing.Destination{URI: ok + "/audit"}},
				{
					Source: routing.Source{Namespace: "shop", Name: "broken"}, Subscriber: routing.Destination{URI: failing},
					Delivery: &routing.Delivery{Retry: 1, BackoffPolicy: routing.BackoffLinear, BackoffDelay: routing.Duration(time.Millisecond), DeadLetterSink: dls},
				},
				{
					Source:     routing.Source{Namespace: "shop", Name: "large"},
					Filters:    []routing.Filter{{Exact: map[string]string{"type": "order.large"}}},
					Subscriber: routing.Destination{URI: ok + "/large"},
				},
			},
		}},
		Channels: []routing.Channel{{
			Source: routing.Source{Namespace: "shop", Name: "notifications"},
			Path:   routing.ChannelPath("shop", "notifications"),
			Subscriptions: []routing.Subscription{{
				Source: routing.Source{Namespace: "shop", Name: "email"}, Subscriber: &routing.Destination{URI: ok + "/email"},
			}},
		}},
	}
}

// subscribers start an HTTP subscriber that accepts every event and one
// that refuses every event.
func subscribers(t *testing.T) (ok, failing string, received *atomic.Int64) {
	received = &atomic.Int64{}
	accept := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	t.Cleanup(accept.Close)
	t.Cleanup(refuse.Close)
	return accept.URL, refuse.URL, received
}

// send posts n events in binary mode, with a body the page must never
// show, and checks that each is accepted.
func send(t *testing.T, base, path, typ string, n int) {
	t.Helper()
	sendFrom(t, base, path, typ, 0, n)
}

// burst sends n events from several clients at once.
func burst(t *testing.T, base, path, typ string, n, clients int) {
	t.Helper()
	var wg sync.WaitGroup
	per := n / clients
	for c := range clients {
		count := per
		if c == clients-1 {
			count = n - per*(clients-1)
		}
		wg.Go(func() { sendFrom(t, base, path, typ, c*per, count) })
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}

// sendFrom sends n events whose ids count from first; it may run on a
// goroutine of its own, so it reports with Errorf.
func sendFrom(t *testing.T, base, path, typ string, first, n int) {
	for i := first; i < first+n; i++ {
		req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(`{"card":"4111 1111 1111 1111"}`))
		if err != nil {
			t.Error(err)
			return
		}
		req.Header.Set("Ce-Specversion", "1.0")
		req.Header.Set("Ce-Id", typ+"-"+strconv.Itoa(i))
		req.Header.Set("Ce-Source", "/test")
		req.Header.Set("Ce-Type", typ)
		req.Header.Set("Ce-Tenant", "acme")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Errorf("sending event %d to %s: %s", i, path, resp.Status)
			return
		}
	}
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func getState(t *testing.T, base string) map[string]*ui.NodeState {
	t.Helper()
	code, b := get(t, base+"/ui/api/state")
	if code != http.StatusOK {
		t.Fatalf("GET /ui/api/state: %d %s", code, b)
	}
	var st ui.State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st.Nodes
}

// poll calls cond until it holds, or fails the test after a while.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// metricsText reads /metrics as text: the value of each series, by its
// name and labels as written there.
func metricsText(t *testing.T, base string) map[string]uint64 {
	t.Helper()
	code, b := get(t, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	series := map[string]uint64{}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "knc_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		series[line[:i]] = uint64(v)
	}
	return series
}

// TestCountersEqualMetrics sends a burst of 10,000 events through a real
// engine and checks that, once every delivery ended, each counter of the
// page is the series of /metrics it stands for, read from the text
// /metrics serves.
func TestCountersEqualMetrics(t *testing.T) {
	ok, failing, _ := subscribers(t)
	s := serve(t, shopTable(ok, failing), setup{})
	orders, large, notes := 9000, 500, 500
	if testing.Short() {
		orders, large, notes = 300, 40, 25
	}
	burst(t, s.url, "/brokers/shop/default", "order.created", orders, 16)
	burst(t, s.url, "/brokers/shop/default", "order.large", large, 16)
	burst(t, s.url, "/channels/shop/notifications", "note", notes, 16)

	var st map[string]*ui.NodeState
	poll(t, "every delivery to end", func() bool {
		st = getState(t, s.admin)
		b := st["Broker/shop/default"]
		return b.Counts.Accepted == uint64(orders+large) && b.Counts.InFlight == 0 &&
			st["Trigger/shop/broken"].Counts.DeadLettered == uint64(orders+large) &&
			st["Channel/shop/notifications"].Counts.Delivered == uint64(notes)
	})
	m := metricsText(t, s.admin)
	source := func(name, kind, ns, obj string) uint64 {
		return m[fmt.Sprintf(`%s{kind=%q,name=%q,namespace=%q}`, name, kind, obj, ns)]
	}
	target := func(name, kind, obj, tkind, tname string) uint64 {
		return m[fmt.Sprintf(`%s{kind=%q,name=%q,namespace="shop",target=%q,target_kind=%q}`, name, kind, obj, tname, tkind)]
	}
	want := map[string]ui.Counts{
		"Broker/shop/default": {
			Accepted:     source("knc_events_accepted_total", "broker", "shop", "default"),
			Delivered:    source("knc_events_delivered_total", "broker", "shop", "default"),
			Retried:      source("knc_delivery_retries_total", "broker", "shop", "default"),
			DeadLettered: source("knc_events_dead_lettered_total", "broker", "shop", "default"),
		},
		"Channel/shop/notifications": {
			Accepted:  source("knc_events_accepted_total", "channel", "shop", "notifications"),
			Delivered: source("knc_events_delivered_total", "channel", "shop", "notifications"),
		},
		"Subscription/shop/email": {
			Accepted:  target("knc_deliveries_accepted_total", "channel", "notifications", "subscription", "email"),
			Delivered: target("knc_deliveries_delivered_total", "channel", "notifications", "subscription", "email"),
		},
	}
	for _, tr := range []string{"audit", "broken", "large"} {
		want["Trigger/shop/"+tr] = ui.Counts{
			Accepted:     target("knc_deliveries_accepted_total", "broker", "default", "trigger", tr),
			Delivered:    target("knc_deliveries_delivered_total", "broker", "default", "trigger", tr),
			DeadLettered: target("knc_deliveries_dead_lettered_total", "broker", "default", "trigger", tr),
		}
	}
	got := map[string]ui.Counts{}
	for id, n := range st {
		got[id] = n.Counts
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("page counters (-/metrics +page):\n%s", diff)
	}
	// The numbers are those of the traffic, not only equal to one another.
	if w := (ui.Counts{Accepted: uint64(orders + large), Delivered: uint64(orders + large)}); got["Trigger/shop/audit"] != w {
		t.Errorf("audit = %+v, want %+v", got["Trigger/shop/audit"], w)
	}
	if got["Trigger/shop/large"].Delivered != uint64(large) || got["Broker/shop/default"].Retried != uint64(orders+large) {
		t.Errorf("large = %+v, broker = %+v; want %d delivered and %d retries", got["Trigger/shop/large"], got["Broker/shop/default"], large, orders+large)
	}
	for id, n := range st {
		if n.Ready == nil || n.Ready.Status != status.True {
			t.Errorf("%s: Ready = %+v, want True", id, n.Ready)
		}
	}
}

// sseEvent reads the next event of a server-sent event stream, skipping
// comments.
func sseEvent(t *testing.T, r *bufio.Reader) (event, data string) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && event != "":
			return event, data
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data += strings.TrimPrefix(line, "data: ")
		}
	}
}

// TestEventStreamFollowsTheCounters reads /ui/events while events are
// sent: it sends the state at once, then again as the counters move.
func TestEventStreamFollowsTheCounters(t *testing.T) {
	ok, failing, _ := subscribers(t)
	s := serve(t, shopTable(ok, failing), setup{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.admin+"/ui/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	r := bufio.NewReader(resp.Body)
	read := func() map[string]*ui.NodeState {
		ev, data := sseEvent(t, r)
		if ev != "state" {
			t.Fatalf("event %q: %s", ev, data)
		}
		var st map[string]*ui.NodeState
		if err := json.Unmarshal([]byte(data), &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	first := read()
	if first["Broker/shop/default"].Counts.Accepted != 0 || len(first) != 6 {
		t.Fatalf("first state = %v, want 6 nodes with nothing accepted", first)
	}
	send(t, s.url, "/brokers/shop/default", "order.large", 5)
	for {
		st := read()
		if c := st["Trigger/shop/large"].Counts; c.Delivered == 5 {
			if st["Broker/shop/default"].Counts.Accepted != 5 {
				t.Errorf("broker accepted %d, want 5", st["Broker/shop/default"].Counts.Accepted)
			}
			break
		}
	}
}

// TestUIListeners checks where the page is served: beside the ingresses
// without an admin listener, as knc run serves it; on the admin listener
// only, as knc runtime serves it in a cluster, where the ingress listener
// is the Service every client reaches.
func TestUIListeners(t *testing.T) {
	ok, failing, _ := subscribers(t)
	t.Run("one listener", func(t *testing.T) {
		s := serve(t, shopTable(ok, failing), setup{})
		for _, p := range []string{"/ui", "/ui/", "/ui/static/app.js", "/ui/static/app.css", "/ui/graph.svg", "/ui/api/topology", "/ui/api/state"} {
			if code, b := get(t, s.url+p); code != http.StatusOK {
				t.Errorf("GET %s: %d %s", p, code, b)
			}
		}
	})
	t.Run("admin listener", func(t *testing.T) {
		s := serve(t, shopTable(ok, failing), setup{separateAdmin: true})
		for _, p := range []string{"/ui", "/ui/", "/ui/static/app.js", "/ui/graph.svg", "/ui/api/topology", "/ui/api/state", "/ui/events"} {
			code, b := get(t, s.url+p)
			if code != http.StatusNotFound || !strings.Contains(string(b), "admin listener only") {
				t.Errorf("GET %s on the ingress listener: %d %s, want 404", p, code, b)
			}
		}
		for _, p := range []string{"/ui", "/ui/static/app.js", "/ui/graph.svg", "/ui/api/topology", "/ui/api/state"} {
			if code, b := get(t, s.admin+p); code != http.StatusOK {
				t.Errorf("GET %s on the admin listener: %d %s", p, code, b)
			}
		}
		// Events still flow on the ingress listener.
		send(t, s.url, "/brokers/shop/default", "order.created", 1)
	})
}

// TestPageWithoutDrawing: a runtime given no layout, as the runtime's own
// binary, answers 501 for the drawing, saying where to get one, and
// serves the rest of the page: its nodes, their state and the page itself.
func TestPageWithoutDrawing(t *testing.T) {
	ok, failing, _ := subscribers(t)
	s := serve(t, shopTable(ok, failing), setup{noDrawing: true})
	code, b := get(t, s.url+"/ui/graph.svg")
	if code != http.StatusNotImplemented || !strings.Contains(string(b), "knc graph -o svg") {
		t.Errorf("GET /ui/graph.svg: %d %s, want 501 naming knc graph", code, b)
	}
	for _, p := range []string{"/ui", "/ui/static/app.js", "/ui/api/topology", "/ui/api/state", "/ui/api/topology?broker=default"} {
		if code, b := get(t, s.url+p); code != http.StatusOK {
			t.Errorf("GET %s: %d %s", p, code, b)
		}
	}
	_, b = get(t, s.url+"/ui/api/topology")
	var top struct{ Nodes []ui.Node }
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	if len(top.Nodes) != 6 {
		t.Errorf("/ui/api/topology lists %d nodes, want the 6 of the table: a Broker, its 3 Triggers, a Channel and its Subscription: %s", len(top.Nodes), b)
	}
}

func TestPageIsSelfContained(t *testing.T) {
	ok, failing, _ := subscribers(t)
	s := serve(t, shopTable(ok, failing), setup{})
	resp, err := http.Get(s.url + "/ui")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("Content-Security-Policy = %q, want default-src 'self'", csp)
	}
	for _, p := range []string{"/ui", "/ui/static/app.js", "/ui/static/app.css", "/ui/static/layout.js"} {
		_, body := get(t, s.url+p)
		// The SVG namespace is a name, not a place anything is loaded from.
		text := strings.ReplaceAll(string(body), "http://www.w3.org/2000/svg", "")
		for _, ref := range []string{"http://", "https://", "//cdn", "@import"} {
			if strings.Contains(text, ref) {
				t.Errorf("%s refers to %s: the page must load nothing from elsewhere", p, ref)
			}
		}
	}
	if !strings.Contains(string(b), `src="/ui/static/app.js"`) {
		t.Errorf("the page does not load its script:\n%s", b)
	}
}

// TestAssetsAreRevalidated: the page's script, style sheet and Graphviz
// carry an entity tag, so that a browser that has them is answered 304
// Not Modified rather than sent them again.
func TestAssetsAreRevalidated(t *testing.T) {
	ok, failing, _ := subscribers(t)
	s := serve(t, shopTable(ok, failing), setup{})
	for _, p := range []string{"/ui/static/app.js", "/ui/static/app.css", "/ui/static/layout.js", "/ui/static/graphviz/graphviz.js"} {
		resp, err := http.Get(s.url + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		tag := resp.Header.Get("ETag")
		if resp.StatusCode != http.StatusOK || tag == "" || resp.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s: %s, ETag %q, Cache-Control %q; want 200 with an entity tag, revalidated", p, resp.Status, tag, resp.Header.Get("Cache-Control"))
			continue
		}
		req, err := http.NewRequest(http.MethodGet, s.url+p, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("If-None-Match", tag)
		again, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, again.Body)
		again.Body.Close()
		if again.StatusCode != http.StatusNotModified || n != 0 {
			t.Errorf("GET %s again with its entity tag: %s and %d bytes, want 304 and none", p, again.Status, n)
		}
	}
}

// TestRecentEventsOffByDefault checks that no event is kept unless asked:
// the page says so, and the engine is given no observer.
func TestRecentEventsOffByDefault(t *testing.T) {
	ok, failing, _ := subscribers(t)
	s := serve(t, shopTable(ok, failing), setup{})
	if s.recent != nil {
		t.Fatalf("NewRecent(0) = %v, want nil", s.recent)
	}
	send(t, s.url, "/brokers/shop/default", "order.large", 2)
	_, b := get(t, s.admin+"/ui/api/topology")
	var top struct {
		RecentEvents int `json:"recentEvents"`
	}
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	if top.RecentEvents != 0 {
		t.Errorf("recentEvents = %d, want 0", top.RecentEvents)
	}
	code, body := get(t, s.admin+"/ui/api/recent?id=Trigger/shop/large")
	if code != http.StatusNotFound || !strings.Contains(string(body), "runtime.ui.recentEvents") {
		t.Errorf("GET /ui/api/recent: %d %s, want 404 naming the setting", code, body)
	}
}

// TestRecentEventsOfARoute sends more events than are kept and reads the
// last ones a Trigger matched: their attributes, newest first, never their
// data, and none of the events its filter let pass.
func TestRecentEventsOfARoute(t *testing.T) {
	ok, failing, received := subscribers(t)
	s := serve(t, shopTable(ok, failing), setup{recentEvents: 3})
	send(t, s.url, "/brokers/shop/default", "order.created", 4)
	send(t, s.url, "/brokers/shop/default", "order.large", 10)
	poll(t, "the deliveries", func() bool { return received.Load() >= 4+10+10+14 })
	_, b := get(t, s.admin+"/ui/api/recent?id="+"Trigger/shop/large")
	if strings.Contains(string(b), "4111") {
		t.Fatalf("the recent events show the data:\n%s", b)
	}
	var got struct {
		Events []ui.RecentEvent `json:"events"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range got.Events {
		ids = append(ids, e.Attributes["id"])
		if e.Attributes["tenant"] != "acme" || e.Attributes["type"] != "order.large" || e.Attributes["source"] != "/test" || e.Attributes["specversion"] != "1.0" {
			t.Errorf("attributes = %v", e.Attributes)
		}
	}
	// Events are routed concurrently, so the three routed last need not be
	// the three sent last; they are listed newest first as routed.
	if len(ids) != 3 || ids[0] == ids[1] || ids[1] == ids[2] || ids[0] == ids[2] {
		t.Errorf("ids = %v, want 3 distinct events", ids)
	}
	for i := 1; i < len(got.Events); i++ {
		if got.Events[i].Time.After(got.Events[i-1].Time) {
			t.Errorf("event %d routed at %v, after the one before it (%v): want newest first", i, got.Events[i].Time, got.Events[i-1].Time)
		}
	}

	if n := len(s.recent.Events("Trigger/shop/audit")); n != 3 {
		t.Errorf("audit keeps %d events, want 3", n)
	}
}

// TestShutdownEndsTheEventStream checks that an open page does not hold up
// the runtime's shutdown: the stream, which never ends by itself, is
// closed with the listener.
func TestShutdownEndsTheEventStream(t *testing.T) {
	ok, failing, _ := subscribers(t)
	s := serve(t, shopTable(ok, failing), setup{})
	resp, err := http.Get(s.url + "/ui/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if ev, _ := sseEvent(t, r); ev != "state" {
		t.Fatalf("first event %q", ev)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.eng.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with a page open: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("shutdown waited for the page's stream")
	}
	// Reading returns once the stream is closed, cleanly or not; it would
	// block here for as long as the stream stayed open.
	_, _ = io.Copy(io.Discard, r)
}

// TestKeptLettersOnThePage: deliveries that failed for good are kept, and
// the page counts them per object with their reasons, no longer in
// flight. The letters themselves are listed by the kept-letter API of the
// admin listener alone, which the page's details read, and never with
// their data.
func TestKeptLettersOnThePage(t *testing.T) {
	const events = 6
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusBadRequest)
	}))
	t.Cleanup(refuse.Close)
	table := &routing.Table{
		APIVersion: routing.APIVersion, Kind: routing.Kind,
		Brokers: []routing.Broker{{
			Source: routing.Source{Namespace: "shop", Name: "default"},
			Path:   routing.BrokerPath("shop", "default"),
			Triggers: []routing.Trigger{
				{Source: routing.Source{Namespace: "shop", Name: "broken"}, Subscriber: routing.Destination{URI: refuse.URL}},
			},
		}},
	}
	s := serve(t, table, setup{separateAdmin: true})
	send(t, s.url, "/brokers/shop/default", "order.created", events)

	var st map[string]*ui.NodeState
	// The Trigger's and the Broker's counters are separate metrics,
	// counted one after the other: wait for both.
	poll(t, "every delivery to be kept", func() bool {
		st = getState(t, s.admin)
		return st["Trigger/shop/broken"].Counts.Kept == events && st["Broker/shop/default"].Counts.Kept == events
	})
	for _, id := range []string{"Trigger/shop/broken", "Broker/shop/default"} {
		n := st[id]
		if n.Counts.InFlight != 0 || n.Counts.Kept != events {
			t.Errorf("%s: counts %+v; want %d kept and none in flight", id, n.Counts, events)
		}
		if d := cmp.Diff(map[string]uint64{kept.ReasonNoDeadLetterSink: events}, n.Kept); d != "" {
			t.Errorf("%s: kept by reason (-want +got):\n%s", id, d)
		}
	}

	list := kept.PathLetters + "?" + kept.Filter{Namespace: "shop", TargetKind: "Trigger", Target: "broken"}.Query().Encode()
	if code, _ := get(t, s.url+list); code != http.StatusNotFound {
		t.Errorf("the ingress listener answers the letters' list with %d, want 404", code)
	}
	code, b := get(t, s.admin+list)
	if code != http.StatusOK {
		t.Fatalf("the admin listener answers the letters' list with %d: %s", code, b)
	}
	var res kept.ListResult
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Letters) != events || res.Letters[0].Reason != kept.ReasonNoDeadLetterSink || res.Letters[0].Status != http.StatusBadRequest {
		t.Errorf("letters %+v; want %d, reason %s, status 400", res.Letters, events, kept.ReasonNoDeadLetterSink)
	}
	if strings.Contains(string(b), "4111") || strings.Contains(string(b), `"data"`) {
		t.Errorf("the list of letters holds event data:\n%s", b)
	}
	// The page's script lists them from there, sending the token it is
	// given.
	_, js := get(t, s.admin+"/ui/static/app.js")
	if !strings.Contains(string(js), "'"+kept.PathLetters+"?'") || !strings.Contains(string(js), "Authorization") {
		t.Errorf("the page's script does not list kept letters from %s with a token", kept.PathLetters)
	}
}
