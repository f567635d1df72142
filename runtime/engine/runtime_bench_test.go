package engine

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/knc-dev/knc/internal/loadgen"
	"github.com/knc-dev/knc/internal/procstat"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/delivery"
	"github.com/knc-dev/knc/runtime/tracing"
	"github.com/knc-dev/knc/runtime/tracing/otlptest"
)

// The runtime benchmarks start everything on loopback in this process: the
// engine, the load generator, the subscribers and the ceilings they are
// compared with (a plain net/http handler answering 202; a direct net/http
// client posting to the same subscribers). Each scenario alternates the
// ceiling and the runtime in rounds and reports medians, so that both see
// the same machine; ratios are taken within a round. Run one with
//
//	go test -run '^$' -bench 'Runtime/ingress$' -benchtime 1x ./runtime/engine
var (
	benchRounds = flag.Int("runtime.rounds", 3, "rounds of each runtime benchmark scenario")
	benchWindow = flag.Duration("runtime.window", time.Second, "measured window of each round")
	benchWarmup = flag.Duration("runtime.warmup", 300*time.Millisecond, "unmeasured load before each window")
	benchConns  = flag.Int("runtime.conns", 64, "connections of the load generator in throughput scenarios")
	benchOnly   = flag.Bool("runtime.only", false, "skip the ceilings, to profile the runtime alone")
	tailWindow  = flag.Duration("runtime.tail-window", time.Minute, "measured window of the tail scenario")
)

// benchInFlight bounds the events between the load generator and the
// subscribers in end-to-end scenarios: enough to keep every stage busy,
// few enough that the streams stay in memory.
const benchInFlight = 512

// The event type the single-Trigger scenarios match.
const benchType = "loadgen"

// discardSpans is an exporter that drops what it is given: the cost of
// making spans, without the cost of sending them.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

func BenchmarkRuntime(b *testing.B) {
	// As knc run and knc runtime do.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(GCPercent))
	}
	b.Run("ingress", benchRuntimeIngress)
	b.Run("trigger1", benchRuntimeTrigger1)
	b.Run("triggers1000", benchRuntimeTriggers1000)
	b.Run("fanout10", func(b *testing.B) { benchRuntimeFanout(b, false) })
	b.Run("channel10", func(b *testing.B) { benchRuntimeFanout(b, true) })
	b.Run("delivery", benchRuntimeDelivery)
	b.Run("latency1", benchRuntimeLatency1)
	b.Run("latency64", benchRuntimeLatency64)
	b.Run("tail", benchRuntimeTail)
	b.Run("fsync", benchRuntimeFsync)
	b.Run("tracing", benchRuntimeTracing)
}

// medians collects one value per round of each metric and reports their
// medians.
type medians map[string][]float64

func (m medians) add(unit string, v float64) { m[unit] = append(m[unit], v) }

func (m medians) report(b *testing.B) {
	units := make([]string, 0, len(m))
	for u := range m {
		units = append(units, u)
	}
	sort.Strings(units)
	for _, u := range units {
		b.ReportMetric(median(m[u]), u)
	}
	var lines []string
	for _, u := range units {
		lines = append(lines, fmt.Sprintf("%s %s", u, fmtValues(m[u])))
	}
	b.Logf("rounds:\n%s", strings.Join(lines, "\n"))
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtValues(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatFloat(x, 'g', 4, 64)
	}
	return strings.Join(parts, " ")
}

func µs(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// load runs the load generator and fails the benchmark on any failed
// request.
func load(b *testing.B, cfg loadgen.Config) *loadgen.Result {
	b.Helper()
	if cfg.Connections == 0 {
		cfg.Connections = *benchConns
	}
	if cfg.Duration == 0 {
		cfg.Duration = *benchWindow
	}
	if cfg.Warmup == 0 {
		cfg.Warmup = *benchWarmup
	}
	r, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	if r.Errors > 0 || r.Requests == 0 {
		b.Fatalf("%s: %d of %d requests failed (%v), status codes %v", cfg.URL, r.Errors, r.Requests, r.FirstError, r.Status)
	}
	return r
}

// ceiling runs the load of a ceiling, or with -runtime.only pretends it
// answered instantly.
func ceiling(b *testing.B, cfg loadgen.Config) *loadgen.Result {
	if *benchOnly {
		return &loadgen.Result{Requests: 1, Elapsed: time.Nanosecond, Latency: loadgen.Latencies{0}}
	}
	return load(b, cfg)
}

// plainServer is the ingress ceiling: a net/http handler that reads the
// body and answers 202.
func plainServer(b *testing.B) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

func newSubscriber(b *testing.B) *loadgen.Subscriber {
	sub, err := loadgen.NewSubscriber()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sub.Close() })
	return sub
}

// gatedRound sends load through an engine for one window with at most
// inFlight events between the load generator and the subscribers (weight
// deliveries per event), then waits for everything sent to be delivered,
// so that the next round starts from an empty pipeline.
func gatedRound(b *testing.B, sub *loadgen.Subscriber, cfg loadgen.Config, weight int) *loadgen.Result {
	return gatedRoundOf(b, sub, cfg, weight, benchInFlight)
}

// gatedRoundOf is gatedRound with at most inFlight events in flight.
func gatedRoundOf(b *testing.B, sub *loadgen.Subscriber, cfg loadgen.Config, weight, inFlight int) *loadgen.Result {
	b.Helper()
	gate := loadgen.NewGate(inFlight * weight)
	sub.SetGate(gate)
	defer sub.SetGate(nil)
	cfg.Gate, cfg.Weight, cfg.Count = gate, weight, sub.Received
	sub.Record()
	r := load(b, cfg)
	if !gate.WaitIdle(time.Now().Add(2 * time.Minute)) {
		b.Fatalf("%s: deliveries still outstanding two minutes after the load stopped", cfg.URL)
	}
	return r
}

func e2eLatency(m medians, sub *loadgen.Subscriber) {
	l := sub.Latencies()
	m.add("e2e-p50-ms", ms(l.Percentile(50)))
	m.add("e2e-p99-ms", ms(l.Percentile(99)))
}

func postLatency(m medians, prefix string, r *loadgen.Result) {
	m.add(prefix+"p50-ms", ms(r.Latency.Percentile(50)))
	m.add(prefix+"p99-ms", ms(r.Latency.Percentile(99)))
}

// benchRuntimeIngress: the durable ingress alone (a Broker without
// Triggers, whose route stage drains the ingress stream) next to the plain
// handler.
func benchRuntimeIngress(b *testing.B) {
	plain := plainServer(b)
	e := benchEngine(b, brokerTable())
	m := medians{}
	for range *benchRounds {
		c := ceiling(b, loadgen.Config{URL: plain})
		k := load(b, loadgen.Config{URL: e.URL() + "/brokers/ns/b"})
		m.add("events/s", k.PerSecond())
		m.add("cpu-µs/event", µs(k.CPUPerRequest()))
		postLatency(m, "", k)
		m.add("ceiling-events/s", c.PerSecond())
		m.add("ceiling-cpu-µs/event", µs(c.CPUPerRequest()))
		m.add("ratio", k.PerSecond()/c.PerSecond())
		m.add("cpu-ratio", µs(c.CPUPerRequest())/µs(k.CPUPerRequest()))
	}
	m.report(b)
}

// benchRuntimeTrigger1: end to end through one matching Trigger.
func benchRuntimeTrigger1(b *testing.B) {
	plain := plainServer(b)
	sub := newSubscriber(b)
	e := benchEngine(b, brokerTable(trigger("t", sub.URL, map[string]string{"type": benchType})))
	m := medians{}
	for range *benchRounds {
		c := ceiling(b, loadgen.Config{URL: plain})
		k := gatedRound(b, sub, loadgen.Config{URL: e.URL() + "/brokers/ns/b", Events: []loadgen.Event{{Type: benchType}}}, 1)
		e2eLatency(m, sub)
		m.add("events/s", k.CountedPerSecond())
		m.add("cpu-µs/event", µs(k.CPU)/float64(k.Counted))
		m.add("ceiling-events/s", c.PerSecond())
		m.add("ratio", k.CountedPerSecond()/c.PerSecond())
	}
	m.report(b)
}

// benchRuntimeTracing: trigger1 with tracing on, every trace sampled,
// next to the same setup with tracing off, in the same rounds. Tracing on
// runs twice: with its spans exported over OTLP/HTTP to a receiver in this
// process (whose decoding is counted in the CPU of those rounds; its queue
// is large enough that no span is dropped, spans/event says how many
// arrived), and with the spans made but dropped by the exporter, which
// tells the cost of making spans from the cost of sending them.
func benchRuntimeTracing(b *testing.B) {
	b.Setenv("OTEL_BSP_SCHEDULE_DELAY", "200")
	b.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "262144")
	b.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "2048")
	b.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	rcv, err := otlptest.NewHTTP(otlptest.CountOnly())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rcv.Close)
	exported, err := tracing.New(context.Background(), tracing.Config{Endpoint: rcv.URL, Protocol: tracing.ProtocolHTTP})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = exported.Shutdown(context.Background()) })
	dropped := tracing.NewProvider(sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardSpans{})))
	b.Cleanup(func() { _ = dropped.Shutdown(context.Background()) })
	sub := newSubscriber(b)
	table := func() *routing.Table { return brokerTable(trigger("t", sub.URL, map[string]string{"type": benchType})) }
	off := benchEngine(b, table())
	on := benchEngineOpts(b, Options{Table: table(), Tracer: exported})
	made := benchEngineOpts(b, Options{Table: table(), Tracer: dropped})
	events := []loadgen.Event{{Type: benchType}}
	cpu := func(r *loadgen.Result) float64 { return µs(r.CPU) / float64(r.Counted) }
	m := medians{}
	for range *benchRounds {
		k0 := gatedRound(b, sub, loadgen.Config{URL: off.URL() + "/brokers/ns/b", Events: events}, 1)
		km := gatedRound(b, sub, loadgen.Config{URL: made.URL() + "/brokers/ns/b", Events: events}, 1)
		sub.Latencies()
		spans0, delivered0 := rcv.Len(), sub.Received()
		k := gatedRound(b, sub, loadgen.Config{URL: on.URL() + "/brokers/ns/b", Events: events}, 1)
		e2eLatency(m, sub)
		// Wait for the batches of the round to be exported, so that the
		// next round starts with nothing pending.
		deadline := time.Now().Add(10 * time.Second)
		for prev := -1; rcv.Len() != prev && time.Now().Before(deadline); {
			prev = rcv.Len()
			time.Sleep(300 * time.Millisecond)
		}
		m.add("events/s", k.CountedPerSecond())
		m.add("cpu-µs/event", cpu(k))
		m.add("off-events/s", k0.CountedPerSecond())
		m.add("off-cpu-µs/event", cpu(k0))
		m.add("made-events/s", km.CountedPerSecond())
		m.add("made-cpu-µs/event", cpu(km))
		m.add("ratio", k.CountedPerSecond()/k0.CountedPerSecond())
		m.add("cpu-ratio", cpu(k)/cpu(k0))
		m.add("made-cpu-ratio", cpu(km)/cpu(k0))
		m.add("spans/event", float64(rcv.Len()-spans0)/float64(sub.Received()-delivered0))
	}
	m.report(b)
}

// benchRuntimeTriggers1000: one Broker with a thousand Triggers, each
// matching one event type; every event matches exactly one. It is compared
// with one Trigger, end to end, in the same rounds.
func benchRuntimeTriggers1000(b *testing.B) {
	sub := newSubscriber(b)
	one := benchEngine(b, brokerTable(trigger("t", sub.URL, map[string]string{"type": benchType})))
	var triggers []routing.Trigger
	var events []loadgen.Event
	for i := range 1000 {
		typ := fmt.Sprintf("t%d", i)
		triggers = append(triggers, routing.Trigger{
			Source:     routing.Source{Namespace: "ns", Name: typ},
			Filters:    []routing.Filter{{Exact: map[string]string{"type": typ}}},
			Subscriber: routing.Destination{URI: sub.URL + "/t/" + typ},
		})
		events = append(events, loadgen.Event{Type: typ})
	}
	many := benchEngine(b, brokerTable(triggers...))
	m := medians{}
	for range *benchRounds {
		k1 := gatedRound(b, sub, loadgen.Config{URL: one.URL() + "/brokers/ns/b", Events: []loadgen.Event{{Type: benchType}}}, 1)
		sub.Latencies()
		k := gatedRound(b, sub, loadgen.Config{URL: many.URL() + "/brokers/ns/b", Events: events}, 1)
		e2eLatency(m, sub)
		m.add("events/s", k.CountedPerSecond())
		m.add("cpu-µs/event", µs(k.CPU)/float64(k.Counted))
		m.add("trigger1-events/s", k1.CountedPerSecond())
		m.add("trigger1-cpu-µs/event", µs(k1.CPU)/float64(k1.Counted))
		m.add("ratio", k.CountedPerSecond()/k1.CountedPerSecond())
		m.add("cpu-ratio", (µs(k1.CPU)/float64(k1.Counted))/(µs(k.CPU)/float64(k.Counted)))
	}
	m.report(b)
}

// benchRuntimeFanout: ten Triggers (or a Channel's ten Subscriptions) that
// all take every event, next to a direct client that posts the same number
// of deliveries to the same subscriber.
func benchRuntimeFanout(b *testing.B, channel bool) {
	const fanout = 10
	sub := newSubscriber(b)
	var table *routing.Table
	path := "/brokers/ns/b"
	if channel {
		c := routing.Channel{Source: routing.Source{Namespace: "ns", Name: "c"}, Path: routing.ChannelPath("ns", "c")}
		for i := range fanout {
			c.Subscriptions = append(c.Subscriptions, routing.Subscription{
				Source:     routing.Source{Namespace: "ns", Name: fmt.Sprintf("s%d", i)},
				Subscriber: &routing.Destination{URI: fmt.Sprintf("%s/s/%d", sub.URL, i)},
			})
		}
		table = &routing.Table{APIVersion: routing.APIVersion, Kind: routing.Kind, Channels: []routing.Channel{c}}
		path = c.Path
	} else {
		var triggers []routing.Trigger
		for i := range fanout {
			triggers = append(triggers, trigger(fmt.Sprintf("t%d", i), fmt.Sprintf("%s/t/%d", sub.URL, i), map[string]string{"type": benchType}))
		}
		table = brokerTable(triggers...)
	}
	e := benchEngine(b, table)
	m := medians{}
	for range *benchRounds {
		d := direct{rate: 1}
		if !*benchOnly {
			d = directDeliveries(b, sub.URL+"/direct", *benchWindow)
		}
		k := gatedRound(b, sub, loadgen.Config{URL: e.URL() + path, Events: []loadgen.Event{{Type: benchType}}}, fanout)
		e2eLatency(m, sub)
		m.add("events/s", k.CountedPerSecond()/fanout)
		m.add("deliveries/s", k.CountedPerSecond())
		m.add("cpu-µs/delivery", µs(k.CPU)/float64(k.Counted))
		m.add("ceiling-deliveries/s", d.rate)
		m.add("ratio", k.CountedPerSecond()/d.rate)
	}
	m.report(b)
}

// direct is what a direct client achieved.
type direct struct {
	rate float64 // requests/s
	cpu  float64 // µs per request
}

// directDeliveryConcurrency is how many requests the direct client keeps in
// flight: as many as the engine's dispatch stage.
const directDeliveryConcurrency = DefaultDeliveryConcurrency

// sentHeader is the header of the load generator's loadsent extension.
var sentHeader = http.CanonicalHeaderKey("Ce-" + loadgen.SentExtension)

// directDeliveries is the delivery ceiling for a window of d.
func directDeliveries(b *testing.B, url string, d time.Duration) direct {
	return directPost(b, url, d, 0)
}

// directPost is the delivery ceiling: net/http posting binary-mode events
// to url with as many requests in flight as the dispatch stage keeps,
// through a transport set up as the engine's, for d, or n requests when n
// is positive.
func directPost(b *testing.B, url string, d time.Duration, n int64) direct {
	client := delivery.NewSender().Client
	body := loadgen.DefaultBody
	var sent, failed atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	start, cpu := time.Now(), procstat.CPUTime()
	for range directDeliveryConcurrency {
		wg.Go(func() {
			for !stop.Load() {
				i := sent.Add(1)
				if n > 0 && i > n {
					return
				}
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
				// The event the load generator sends, loadsent
				// included, which the subscriber reads.
				req.Header = http.Header{
					"Prefer":         {"reply"},
					"Ce-Specversion": {"1.0"},
					"Ce-Id":          {strconv.FormatInt(i, 10)},
					"Ce-Source":      {"/direct"},
					"Ce-Type":        {benchType},
					sentHeader:       {strconv.FormatInt(time.Now().UnixNano(), 10)},
					"Content-Type":   {"application/json"},
				}
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode/100 != 2 {
					failed.Add(1)
				}
			}
		})
	}
	if n == 0 {
		time.Sleep(d)
		stop.Store(true)
	}
	wg.Wait()
	elapsed, used := time.Since(start), procstat.CPUTime()-cpu
	if failed.Load() > 0 {
		b.Fatalf("direct client: %d requests failed", failed.Load())
	}
	done := sent.Load()
	if n > 0 {
		done = n
	} else {
		done -= directDeliveryConcurrency
	}
	return direct{rate: float64(done) / elapsed.Seconds(), cpu: µs(used) / float64(done)}
}

// benchRuntimeDelivery: delivery alone. A backlog of events is stored
// while routing is stopped; then the route stage drains it, making the
// deliveries (their first attempts, which is what almost every delivery
// takes). The direct client posts as many events to the same subscriber,
// with as many requests in flight.
func benchRuntimeDelivery(b *testing.B) {
	sub := newSubscriber(b)
	e := benchEngine(b, brokerTable(trigger("t", sub.URL, map[string]string{"type": benchType})))
	src := e.currentPlan().ForPath("/brokers/ns/b")
	m := medians{}
	for range *benchRounds {
		e.mu.Lock()
		pl := e.served[src.Names().ID]
		for _, r := range pl.routes {
			r.Stop()
		}
		e.mu.Unlock()

		// Store a backlog: every event accepted, none routed.
		accepted0 := testutilCounter(e, "knc_events_accepted_total")
		load(b, loadgen.Config{URL: e.URL() + "/brokers/ns/b", Events: []loadgen.Event{{Type: benchType}}})
		backlog := int64(testutilCounter(e, "knc_events_accepted_total") - accepted0)

		d := direct{rate: 1, cpu: 1}
		if !*benchOnly {
			d = directPost(b, sub.URL+"/direct", 0, backlog)
		}

		before := sub.Received()
		start, cpu := time.Now(), procstat.CPUTime()
		e.mu.Lock()
		for i := range pl.routes {
			_, stream := src.Names().IngressShard(i)
			consumer, err := e.js.Consumer(context.Background(), stream, consumerRoute)
			if err != nil {
				b.Fatal(err)
			}
			pl.routes[i] = e.routeStage(src.Names().ID, stream, consumer, e.log)
			pl.routes[i].Start(e.work)
		}
		e.mu.Unlock()
		if !sub.WaitFor(before+backlog, time.Now().Add(2*time.Minute)) {
			b.Fatalf("delivered %d of %d", sub.Received()-before, backlog)
		}
		elapsed, used := time.Since(start), procstat.CPUTime()-cpu
		rate := float64(backlog) / elapsed.Seconds()
		m.add("deliveries/s", rate)
		m.add("cpu-µs/delivery", µs(used)/float64(backlog))
		m.add("ceiling-deliveries/s", d.rate)
		m.add("ceiling-cpu-µs/delivery", d.cpu)
		m.add("backlog", float64(backlog))
		m.add("ratio", rate/d.rate)
		m.add("cpu-ratio", d.cpu/(µs(used)/float64(backlog)))
	}
	m.report(b)
}

// benchRuntimeLatency1: one event at a time, through one Trigger: the next
// is sent once the subscriber has the previous one, so that nothing queues;
// next to the plain handler at one connection.
func benchRuntimeLatency1(b *testing.B) {
	plain := plainServer(b)
	sub := newSubscriber(b)
	e := benchEngine(b, brokerTable(trigger("t", sub.URL, map[string]string{"type": benchType})))
	m := medians{}
	for range *benchRounds {
		c := ceiling(b, loadgen.Config{URL: plain, Connections: 1})
		k := gatedRoundOf(b, sub, loadgen.Config{URL: e.URL() + "/brokers/ns/b", Connections: 1, Events: []loadgen.Event{{Type: benchType}}}, 1, 1)
		e2eLatency(m, sub)
		postLatency(m, "", k)
		postLatency(m, "ceiling-", c)
		m.add("events/s", k.CountedPerSecond())
	}
	m.report(b)
}

// halfLoad sets up the scenarios at half load: the plain handler, a
// subscriber behind one Trigger, the Broker's URL, the events sent, and
// the maximum end-to-end rate through it, measured first.
func halfLoad(b *testing.B) (plain string, sub *loadgen.Subscriber, url string, events []loadgen.Event, maxRate float64) {
	b.Helper()
	plain = plainServer(b)
	sub = newSubscriber(b)
	e := benchEngine(b, brokerTable(trigger("t", sub.URL, map[string]string{"type": benchType})))
	url = e.URL() + "/brokers/ns/b"
	events = []loadgen.Event{{Type: benchType}}
	maxRate = gatedRound(b, sub, loadgen.Config{URL: url, Connections: 64, Events: events}, 1).CountedPerSecond()
	sub.Latencies()
	return plain, sub, url, events, maxRate
}

// benchRuntimeLatency64: 64 connections sending at half the maximum
// end-to-end rate through one Trigger (open loop, on a fixed schedule),
// measured first in the same run.
func benchRuntimeLatency64(b *testing.B) {
	plain, sub, url, events, maxRate := halfLoad(b)
	m := medians{}
	for range *benchRounds {
		// The plain handler at the same rate shows what the machine alone
		// adds to the tail.
		c := ceiling(b, loadgen.Config{URL: plain, Connections: 64, Rate: maxRate / 2})
		k := gatedRound(b, sub, loadgen.Config{URL: url, Connections: 64, Rate: maxRate / 2, Events: events}, 1)
		e2eLatency(m, sub)
		postLatency(m, "", k)
		postLatency(m, "ceiling-", c)
		m.add("events/s", k.PerSecond())
	}
	m.add("max-events/s", maxRate)
	m.report(b)
}

// slowPost is the latency over which a POST counts as slow in the tail
// scenario.
const slowPost = 50 * time.Millisecond

// benchRuntimeTail: latency64's load held for one long window
// (-runtime.tail-window, a minute), to count the rare slow requests that
// short rounds miss: the percentiles up to p99.9, end to end and of the
// POST, and the POSTs slower than slowPost. The plain handler at the same
// rate, for a tenth of the window, shows what the machine adds.
func benchRuntimeTail(b *testing.B) {
	plain, sub, url, events, maxRate := halfLoad(b)
	m := medians{}
	c := ceiling(b, loadgen.Config{URL: plain, Connections: 64, Rate: maxRate / 2, Duration: *tailWindow / 10})
	k := gatedRound(b, sub, loadgen.Config{URL: url, Connections: 64, Rate: maxRate / 2, Events: events, Duration: *tailWindow, SlowOver: tailTarget}, 1)
	gc := gcPauseEnds()
	l := sub.Latencies()
	m.add("e2e-p50-ms", ms(l.Percentile(50)))
	m.add("e2e-p99-ms", ms(l.Percentile(99)))
	m.add("e2e-p99.9-ms", ms(l.Percentile(99.9)))
	postLatency(m, "", k)
	m.add("p99.9-ms", ms(k.Latency.Percentile(99.9)))
	m.add("max-ms", ms(k.Latency.Percentile(100)))
	slow := len(k.Latency) - sort.Search(len(k.Latency), func(i int) bool { return k.Latency[i] > slowPost })
	m.add("posts-over-50ms", float64(slow))
	m.add("posts-over-50ms-%", 100*float64(slow)/float64(max(len(k.Latency), 1)))
	postLatency(m, "ceiling-", c)
	m.add("ceiling-p99.9-ms", ms(c.Latency.Percentile(99.9)))
	m.add("events/s", k.PerSecond())
	m.add("max-events/s", maxRate)
	m.add("cpu-cores", k.CPU.Seconds()/k.Elapsed.Seconds())
	// Which slow POSTs came with a garbage collection: the share of them
	// due within gcNear of a collection's end, next to the share of the
	// window that lies that near one.
	near := gcNearness(k.Slow, gc, k.Start, k.Start.Add(k.Elapsed), gcNear)
	m.add("gc-cycles/s", float64(near.cycles)/k.Elapsed.Seconds())
	m.add("posts-over-"+tailTarget.String(), float64(len(k.Slow)))
	m.add("posts-over-"+tailTarget.String()+"-near-gc-%", 100*near.slowShare)
	m.add("time-near-gc-%", 100*near.timeShare)
	m.report(b)
}

// tailTarget is the POST latency the tail scenario counts slow POSTs over
// for its attribution to garbage collection; gcNear is how close to a
// collection's end such a POST must be due to count as near it.
const (
	tailTarget = 3 * time.Millisecond
	gcNear     = 20 * time.Millisecond
)

// gcHistory is how many garbage collections debug.ReadGCStats reports at
// most: the runtime keeps the times of the last 256.
const gcHistory = 256

// gcPauseEnds returns when the last garbage collections (at most
// gcHistory) ended their stop-the-world pauses, oldest first.
func gcPauseEnds() []time.Time {
	var s debug.GCStats
	debug.ReadGCStats(&s)
	ends := slices.Clone(s.PauseEnd)
	slices.Reverse(ends)
	return ends
}

// nearness tells how slow requests and garbage collections fell together
// in a window.
type nearness struct {
	// cycles counts the collections in the window.
	cycles int
	// slowShare is the share of the slow requests due within the radius of
	// a collection; timeShare the share of the window within it.
	slowShare, timeShare float64
}

// gcNearness sets slow requests (due times, sorted) beside collection ends
// (sorted) in the window [from, to). When the runtime's history of
// collections does not reach back to from, only the part of the window it
// covers counts.
func gcNearness(slow, gcEnds []time.Time, from, to time.Time, radius time.Duration) nearness {
	if len(gcEnds) == gcHistory && gcEnds[0].After(from) {
		from = gcEnds[0]
	}
	var n nearness
	var covered time.Duration
	reach := from // the window is measured up to here
	for _, end := range gcEnds {
		if end.Before(from) || !end.Before(to) {
			continue
		}
		n.cycles++
		lo, hi := end.Add(-radius), end.Add(radius)
		lo = later(lo, reach)
		if hi.After(to) {
			hi = to
		}
		if hi.After(lo) {
			covered += hi.Sub(lo)
			reach = hi
		}
	}
	if to.After(from) {
		n.timeShare = float64(covered) / float64(to.Sub(from))
	}
	counted, near := 0, 0
	for _, s := range slow {
		if s.Before(from) || !s.Before(to) {
			continue
		}
		counted++
		i, _ := slices.BinarySearchFunc(gcEnds, s.Add(-radius), time.Time.Compare)
		if i < len(gcEnds) && !gcEnds[i].After(s.Add(radius)) {
			near++
		}
	}
	if counted > 0 {
		n.slowShare = float64(near) / float64(counted)
	}
	return n
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// fsyncShards is the sharded configuration the fsync scenario measures.
const fsyncShards = 8

// benchRuntimeFsync: the durable ingress with fsync durability, with one
// ingress stream and with fsyncShards, next to the same ingress with file
// durability in the same round, and to the rate at which one stream of the
// same server stores one message per event (each fsynced, as a runtime
// without group commit would store them).
func benchRuntimeFsync(b *testing.B) {
	one := benchEngineOpts(b, Options{Table: brokerTable(), Durability: DurabilityFsync, IngressShards: 1})
	sharded := benchEngineOpts(b, Options{Table: brokerTable(), Durability: DurabilityFsync, IngressShards: fsyncShards})
	file := benchEngine(b, brokerTable())
	ref := fsyncReference(b, one)
	m := medians{}
	for range *benchRounds {
		r := ref(*benchWindow)
		f := load(b, loadgen.Config{URL: file.URL() + "/brokers/ns/b"})
		k1 := load(b, loadgen.Config{URL: one.URL() + "/brokers/ns/b"})
		k := load(b, loadgen.Config{URL: sharded.URL() + "/brokers/ns/b"})
		m.add("file-events/s", f.PerSecond())
		m.add("shard1-vs-file", k1.PerSecond()/f.PerSecond())
		m.add("vs-file", k.PerSecond()/f.PerSecond())
		m.add("vs-shard1", k.PerSecond()/k1.PerSecond())
		m.add("events/s", k.PerSecond())
		m.add("cpu-µs/event", µs(k.CPUPerRequest()))
		postLatency(m, "", k)
		m.add("shard1-events/s", k1.PerSecond())
		m.add("shard1-cpu-µs/event", µs(k1.CPUPerRequest()))
		postLatency(m, "shard1-", k1)
		m.add("single-stream-msgs/s", r)
		m.add("ratio", k.PerSecond()/r)
		m.add("shard1-ratio", k1.PerSecond()/r)
	}
	m.report(b)
}

// fsyncReference returns a function that measures, for a window, how many
// messages per second one stream of e's server stores when each event is a
// message of its own, with as many publishers as the load generator has
// connections.
func fsyncReference(b *testing.B, e *Engine) func(time.Duration) float64 {
	ctx := context.Background()
	if _, err := e.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: "bench_fsync_reference", Subjects: []string{"bench.fsync.reference"},
		Storage: jetstream.FileStorage, Retention: jetstream.LimitsPolicy, MaxMsgs: 100000,
	}); err != nil {
		b.Fatal(err)
	}
	return func(d time.Duration) float64 {
		var stored atomic.Int64
		var stop atomic.Bool
		var wg sync.WaitGroup
		start := time.Now()
		for range *benchConns {
			wg.Go(func() {
				for !stop.Load() {
					if _, err := e.js.Publish(ctx, "bench.fsync.reference", loadgen.DefaultBody); err != nil {
						b.Error(err)
						return
					}
					stored.Add(1)
				}
			})
		}
		time.Sleep(d)
		stop.Store(true)
		wg.Wait()
		return float64(stored.Load()) / time.Since(start).Seconds()
	}
}
