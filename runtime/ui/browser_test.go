package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/graph"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/routes"
	"github.com/knc-dev/knc/internal/browsertest"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/topology"
)

// browser starts a headless Chromium with a fresh profile, and nothing it
// would fetch by itself.
func browser(t testing.TB) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browsertest.Chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 40*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})
	return ctx
}

// localQuickstart compiles examples/quickstart as knc run --services-url
// does, every Service at subscriber, and returns its table and the graph
// knc graph makes of it.
func localQuickstart(t *testing.T, subscriber string) (*routing.Table, *topology.Graph) {
	return localExample(t, "quickstart", subscriber)
}

// localExample is localQuickstart for any example.
func localExample(t *testing.T, name, subscriber string) (*routing.Table, *topology.Graph) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Load(compiler.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid() {
		t.Fatal(res.Diagnostics)
	}
	set := res.Units[0].Set
	table, diags := routes.CompileWith(set, res.Config, routes.Options{Address: func(r *model.KReference) (string, bool) {
		return subscriber + "/" + r.Name, r.Kind == "Service"
	}})
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	return table, graph.Build(set, table)
}

// evaluate runs expr in the page and returns its value.
func evaluate[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// cell is the text of a counter of a row of the page's table.
func cell(id, field string) string {
	return fmt.Sprintf(`document.querySelector('#routes tr[data-id=%q] [data-field=%q]').textContent`, id, field)
}

// TestBrowserShowsTheLivePage loads the page of the quickstart in
// Chromium, sends events, and watches the counters of the page move to
// the numbers of /metrics; a click on a Trigger shows its filter and the
// events it matched. KNC_UPDATE=1 writes the screenshot of docs/ui.md.
func TestBrowserShowsTheLivePage(t *testing.T) {
	ctx := browser(t)
	ok, _, received := subscribers(t)
	table, drawn := localQuickstart(t, ok)
	s := serve(t, table, setup{separateAdmin: true, recentEvents: 5, graph: drawn})

	const broker = "Broker/quickstart/default"
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.admin+"/ui"),
		chromedp.WaitVisible(`#graph g.knc-node[data-id="Trigger/quickstart/order-audit"]`),
		chromedp.WaitVisible(`#routes tr[data-id="`+broker+`"]`),
	); err != nil {
		t.Fatal(err)
	}
	if before := evaluate[string](t, ctx, cell(broker, "accepted")); before != "0" {
		t.Errorf("accepted before any event = %q, want 0", before)
	}
	if boxes := evaluate[int](t, ctx, `document.querySelectorAll('#graph g.knc-node').length`); boxes != 7 {
		t.Errorf("%d boxes of the drawing are the page's nodes, want the Broker, 3 Triggers, the Channel and 2 Subscriptions", boxes)
	}

	const n = 12
	send(t, s.url, "/brokers/quickstart/default", "com.example.order.created", n)
	send(t, s.url, "/channels/quickstart/notifications", "com.example.notification", 3)
	poll(t, "the deliveries", func() bool { return received.Load() == 2*n+2*3 })

	// The page follows by itself, through /ui/events.
	want := map[string]string{
		cell(broker, "accepted"):                                 strconv.Itoa(n),
		cell(broker, "delivered"):                                strconv.Itoa(2 * n),
		cell("Trigger/quickstart/order-audit", "delivered"):      strconv.Itoa(n),
		cell("Trigger/quickstart/large-order", "accepted"):       "0",
		cell("Subscription/quickstart/sms", "delivered"):         "3",
		cell("Channel/quickstart/notifications", "inFlight"):     "0",
		cell("Trigger/quickstart/order-created", "deadLettered"): "0",
	}
	deadline := time.Now().Add(15 * time.Second)
	for expr, w := range want {
		for {
			if got := evaluate[string](t, ctx, expr); got == w {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s = %q, want %q", expr, evaluate[string](t, ctx, expr), w)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	m := metricsText(t, s.admin)
	accepted := evaluate[string](t, ctx, cell(broker, "accepted"))
	if series := m[`knc_events_accepted_total{kind="broker",name="default",namespace="quickstart"}`]; strconv.FormatUint(series, 10) != accepted {
		t.Errorf("the page shows %s accepted, /metrics %d", accepted, series)
	}

	if err := chromedp.Do(ctx,
		chromedp.Click(`#graph g.knc-node[data-id="Trigger/quickstart/order-audit"]`),
		chromedp.WaitVisible(`#details`),
		chromedp.WaitVisible(`#recent-table tbody tr`),
	); err != nil {
		t.Fatal(err)
	}
	detail := func(name string) string {
		return evaluate[string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('#details-fields dt')].find(e => e.textContent === %q).nextElementSibling.textContent`, name))
	}
	filter, ready := detail("filter"), detail("Ready")
	recent := evaluate[int](t, ctx, `document.querySelectorAll('#recent-table tbody tr').length`)
	if filter != "type LIKE 'com.example.order.%'" {
		t.Errorf("filter shown = %q", filter)
	}
	if ready != "True (Ready)" {
		t.Errorf("Ready shown = %q, want True (Ready)", ready)
	}
	if recent != 5 {
		t.Errorf("%d recent events shown, want the 5 kept", recent)
	}

	if os.Getenv("KNC_UPDATE") == "1" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join("..", "..", "docs", "images")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "ui-quickstart.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBrowserShowsThePageWithoutDrawing loads, in Chromium, the page of
// a runtime given no layout, as the runtime's own binary serves it: the
// page lays out the drawing itself, from the runtime's DOT, and the
// drawing and the table follow the counters.
func TestBrowserShowsThePageWithoutDrawing(t *testing.T) {
	ctx := browser(t)
	ok, _, received := subscribers(t)
	table, drawn := localQuickstart(t, ok)
	s := serve(t, table, setup{separateAdmin: true, graph: drawn, noDrawing: true})

	const broker = "Broker/quickstart/default"
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.admin+"/ui"),
		chromedp.WaitVisible(`#graph g.knc-node[data-id="`+broker+`"]`),
		chromedp.WaitVisible(`#routes tr[data-id="`+broker+`"]`),
	); err != nil {
		t.Fatal(err)
	}
	if boxes := evaluate[int](t, ctx, `document.querySelectorAll('#graph g.knc-node').length`); boxes != 7 {
		t.Errorf("%d boxes of the drawing are the page's nodes, want the Broker, 3 Triggers, the Channel and 2 Subscriptions", boxes)
	}
	if rows := evaluate[int](t, ctx, `document.querySelectorAll('#routes tbody tr').length`); rows != 7 {
		t.Errorf("%d rows, want the Broker, 3 Triggers, the Channel and 2 Subscriptions", rows)
	}
	send(t, s.url, "/brokers/quickstart/default", "com.example.order.created", 2)
	poll(t, "the deliveries", func() bool { return received.Load() == 4 })
	poll(t, "the page to count them", func() bool {
		return evaluate[string](t, ctx, cell(broker, "accepted")) == "2" &&
			strings.HasPrefix(evaluate[string](t, ctx, `document.querySelector('#graph g.knc-node[data-id="`+broker+`"] text.knc-count').textContent`), "2 accepted")
	})
	// The boxes the browser laid out take the Ready colours and a click,
	// as the runtime's do.
	const trigger = "Trigger/quickstart/order-audit"
	poll(t, "the Trigger's box to show it Ready", func() bool {
		return evaluate[bool](t, ctx, `document.querySelector('#graph g.knc-node[data-id="`+trigger+`"]').classList.contains('knc-ready-True')`)
	})
	if err := chromedp.Do(ctx,
		chromedp.Click(`#graph g.knc-node[data-id="`+trigger+`"]`),
		chromedp.WaitVisible(`#details`),
	); err != nil {
		t.Fatal(err)
	}
	if title := evaluate[string](t, ctx, `document.getElementById('details-title').textContent`); title != "Trigger quickstart/order-audit" {
		t.Errorf("a click on the Trigger's box shows the details of %q", title)
	}
}

// countOverlaps is run in the page: the counts it writes under the boxes
// of the drawing, each against every box and every text of the drawing,
// in the user space of the drawing, which every node shares.
const countOverlaps = `(() => {
	const svg = document.querySelector('#graph svg');
	const rect = (el) => { const b = el.getBBox(); return {x0: b.x, y0: b.y, x1: b.x + b.width, y1: b.y + b.height}; };
	const meet = (a, b) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
	const counts = [...svg.querySelectorAll('text.knc-count')].filter((t) => t.textContent !== '');
	const others = [];
	for (const g of svg.querySelectorAll('g.node')) {
		for (const s of g.querySelectorAll('polygon, path, ellipse')) others.push({what: 'box of ' + g.id, r: rect(s)});
	}
	for (const t of svg.querySelectorAll('text:not(.knc-count)')) others.push({what: 'text ' + JSON.stringify(t.textContent), r: rect(t)});
	const out = [];
	counts.forEach((c, i) => {
		const r = rect(c);
		for (const o of others) if (meet(r, o.r)) out.push(JSON.stringify(c.textContent) + ' meets ' + o.what);
		counts.forEach((d, j) => { if (j > i && meet(r, rect(d))) out.push(JSON.stringify(c.textContent) + ' meets ' + JSON.stringify(d.textContent)); });
	});
	return out;
})()`

// manyTriggers is a Broker with n Triggers, each filtered on a type of its
// own, delivering to subscriber.
func manyTriggers(n int, subscriber string) *routing.Table {
	b := routing.Broker{Source: routing.Source{Namespace: "mesh", Name: "default"}, Path: routing.BrokerPath("mesh", "default")}
	for i := range n {
		name := fmt.Sprintf("t%03d", i)
		b.Triggers = append(b.Triggers, routing.Trigger{
			Source:     routing.Source{Namespace: "mesh", Name: name},
			Attributes: map[string]string{"type": "type." + name},
			Subscriber: routing.Destination{URI: subscriber + "/" + name},
		})
	}
	return &routing.Table{APIVersion: routing.APIVersion, Kind: routing.Kind, Brokers: []routing.Broker{b}}
}

// TestBrowserLoadsEveryTopology loads the page of every example and of a
// Broker with 200 Triggers, and checks that each object the page lists
// found its box in the drawing and its row in the table.
func TestBrowserLoadsEveryTopology(t *testing.T) {
	ctx := browser(t)
	ok, _, received := subscribers(t)
	type example struct {
		name  string
		table *routing.Table
		graph *topology.Graph
	}
	var tops []example
	// examples/plugin is left out: its Broker is of a class another
	// plugin runs, so that knc run has nothing of it to serve.
	for _, name := range []string{"quickstart", "multi-namespace", "policies", "sources"} {
		table, g := localExample(t, name, ok)
		tops = append(tops, example{name, table, g})
	}
	tops = append(tops, example{name: "200 Triggers", table: manyTriggers(200, ok)})
	for _, top := range tops {
		t.Run(top.name, func(t *testing.T) {
			if len(top.table.Brokers) == 0 && len(top.table.Channels) == 0 {
				t.Fatalf("%s serves nothing", top.name)
			}
			s := serve(t, top.table, setup{graph: top.graph})
			if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/ui"), chromedp.WaitVisible(`#routes tbody tr[data-id]`)); err != nil {
				t.Fatal(err)
			}
			checkPageDrawing(t, ctx, s.url)
			if top.name != "200 Triggers" {
				return
			}
			before := received.Load()
			send(t, s.url, "/brokers/mesh/default", "type.t199", 3)
			poll(t, "the deliveries", func() bool { return received.Load() == before+3 })
			expr := cell("Trigger/mesh/t199", "delivered")
			poll(t, "the page to count them", func() bool { return evaluate[string](t, ctx, expr) == "3" })
			if got := evaluate[string](t, ctx, cell("Trigger/mesh/t000", "delivered")); got != "0" {
				t.Errorf("t000 delivered %s, want 0", got)
			}
		})
	}
}

// TestBrowserFiltersThePage shows parts of examples/multi-namespace with
// the page's form, which takes knc graph's filters: the drawing and the
// table show that part alone, its counters still move, a node's details
// link to its neighbourhood, and a filter that names nothing is explained.
func TestBrowserFiltersThePage(t *testing.T) {
	ctx := browser(t)
	ok, _, received := subscribers(t)
	table, drawn := localExample(t, "multi-namespace", ok)
	s := serve(t, table, setup{graph: drawn})

	rows := `[...document.querySelectorAll('#routes tr[data-id]')].map(r => r.dataset.id)`
	boxes := `[...document.querySelectorAll('#graph g.knc-node')].map(g => g.dataset.id).sort()`
	// waitFor polls expr in the page until it is want.
	waitFor := func(expr string, want []string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			got := evaluate[[]string](t, ctx, expr)
			if slices.Equal(got, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s = %q, want %q", expr, got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// A namespace, given in the address.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/ui?namespace=payments"),
		chromedp.WaitVisible(`#graph g.knc-node[data-id="Broker/payments/default"]`),
	); err != nil {
		t.Fatal(err)
	}
	payments := []string{"Broker/payments/default", "Trigger/payments/announce-settled", "Trigger/payments/settle", "Channel/shipping/dispatch"}
	waitFor(rows, payments)
	waitFor(boxes, sorted(payments))
	if got := evaluate[string](t, ctx, `document.querySelector('#filter input[name="namespace"]').value`); got != "payments" {
		t.Errorf("the form's namespace is %q, want payments", got)
	}
	const n = 7
	send(t, s.url, "/brokers/payments/default", "com.example.payment.settled", n)
	poll(t, "the deliveries", func() bool { return received.Load() >= n })
	waitFor(`[`+cell("Broker/payments/default", "accepted")+`]`, []string{strconv.Itoa(n)})

	// A focus, typed into the form: the address says it, to be shared.
	evaluate[bool](t, ctx, `(() => {
		const f = document.getElementById('filter').elements;
		f.namespace.value = '';
		f.focus.value = 'Trigger/orders/history';
		f.depth.value = '0';
		return true;
	})()`)
	if err := chromedp.Do(ctx,
		chromedp.Click(`#filter button[type="submit"]`),
		chromedp.WaitVisible(`#routes tr[data-id="Trigger/orders/history"]`),
	); err != nil {
		t.Fatal(err)
	}
	if got := evaluate[string](t, ctx, `location.search`); got != "?focus=Trigger%2Forders%2Fhistory&depth=0" {
		t.Errorf("the address's query is %q, want the focus and its depth alone", got)
	}
	history := []string{"Broker/orders/default", "Trigger/orders/history"}
	waitFor(rows, history)
	waitFor(boxes, history)

	// A node's details link to its neighbourhood.
	if err := chromedp.Do(ctx,
		chromedp.Click(`#routes tr[data-id="Broker/orders/default"]`),
		chromedp.WaitVisible(`#focus-link`),
		chromedp.Click(`#focus-link`),
		chromedp.WaitVisible(`#routes tr[data-id="Trigger/orders/payment-requests"]`),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(rows, []string{"Broker/orders/default", "Trigger/orders/history", "Trigger/orders/payment-requests"})

	// A focus that names nothing.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/ui?focus=Trigger/orders/histry"),
		chromedp.WaitVisible(`#selection-error`),
	); err != nil {
		t.Fatal(err)
	}
	msg := evaluate[string](t, ctx, `document.getElementById('selection-error').textContent`)
	if want := `did you mean "Trigger/orders/history"?`; !strings.Contains(msg, want) {
		t.Errorf("the page says %q, want it to suggest %s", msg, want)
	}
	if got := evaluate[int](t, ctx, `document.querySelectorAll('#routes tr[data-id]').length`); got != 0 {
		t.Errorf("%d rows shown for a selection of nothing", got)
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestBrowserShowsKeptLetters loads in Chromium the page of a Trigger
// whose subscriber refuses every event: the table counts its kept letters,
// and its details list them, with their reasons and without their data,
// from the kept-letter API of the admin listener. Served beside the
// ingresses, where that API is not, the details say where to look.
func TestBrowserShowsKeptLetters(t *testing.T) {
	ctx := browser(t)
	const events = 3
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
	const trigger = "Trigger/shop/broken"
	for _, tt := range []struct {
		name          string
		separateAdmin bool
	}{{"admin listener", true}, {"beside the ingresses", false}} {
		t.Run(tt.name, func(t *testing.T) {
			s := serve(t, table, setup{separateAdmin: tt.separateAdmin})
			send(t, s.url, "/brokers/shop/default", "order.created", events)
			if err := chromedp.Do(ctx,
				chromedp.Navigate(s.admin+"/ui"),
				chromedp.WaitVisible(`#routes tr[data-id="`+trigger+`"]`),
			); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(15 * time.Second)
			for evaluate[string](t, ctx, cell(trigger, "kept")) != strconv.Itoa(events) {
				if time.Now().After(deadline) {
					t.Fatalf("kept = %q, want %d", evaluate[string](t, ctx, cell(trigger, "kept")), events)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if got := evaluate[string](t, ctx, cell(trigger, "inFlight")); got != "0" {
				t.Errorf("in flight = %q, want 0: kept deliveries have ended", got)
			}
			if err := chromedp.Do(ctx,
				chromedp.Click(`#routes tr[data-id="`+trigger+`"]`),
				chromedp.WaitVisible(`#kept`),
			); err != nil {
				t.Fatal(err)
			}
			if !tt.separateAdmin {
				deadline := time.Now().Add(15 * time.Second)
				for !strings.Contains(evaluate[string](t, ctx, `document.getElementById('kept-note').textContent`), "admin listener only") {
					if time.Now().After(deadline) {
						t.Fatalf("the details say %q, want where the letters are listed", evaluate[string](t, ctx, `document.getElementById('kept-note').textContent`))
					}
					time.Sleep(20 * time.Millisecond)
				}
				return
			}
			if err := chromedp.Do(ctx, chromedp.WaitVisible(`#kept-table tbody tr`)); err != nil {
				t.Fatal(err)
			}
			rows := evaluate[[]string](t, ctx, `[...document.querySelectorAll('#kept-table tbody tr')].map(r => r.cells[2].textContent + ' ' + r.cells[3].textContent)`)
			if d := cmp.Diff([]string{"no-dead-letter-sink 400", "no-dead-letter-sink 400", "no-dead-letter-sink 400"}, rows); d != "" {
				t.Errorf("kept letters shown (-want +got):\n%s", d)
			}
			if reasons := evaluate[string](t, ctx, `[...document.querySelectorAll('#details-fields dt')].find(e => e.textContent === 'kept for').nextElementSibling.textContent`); reasons != "no-dead-letter-sink 3" {
				t.Errorf("kept for %q, want no-dead-letter-sink 3", reasons)
			}
			if body := evaluate[string](t, ctx, `document.body.innerText`); strings.Contains(body, "4111") {
				t.Errorf("the page shows event data")
			}
		})
	}
}
