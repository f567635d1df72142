package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/graph"
	"github.com/knc-dev/knc/compiler/routes"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/runtimeconfig"
	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/internal/topology/layout"
	"github.com/knc-dev/knc/runtime/command"
	"github.com/knc-dev/knc/runtime/engine"
)

// serveAsRuntime starts an engine serving table and its page as the
// runtime's own binary (cmd/knc-runtime, knc runtime) does: its options
// from runtimeconfig's defaults through command.Apply and
// command.ServeUI, with no graph of the project and no layout, so that
// the page is drawn from the table alone, and laid out in the browser.
func serveAsRuntime(t testing.TB, table *routing.Table) *served {
	t.Helper()
	c := runtimeconfig.New(runtimeconfig.Runtime)
	var opts engine.Options
	if err := command.Apply(&opts, c); err != nil {
		t.Fatal(err)
	}
	var eng *engine.Engine
	if err := command.ServeUI(&opts, c, func() *engine.Engine { return eng }, nil, nil); err != nil {
		t.Fatal(err)
	}
	opts.Table = table
	opts.DataDir = t.TempDir()
	opts.HTTPAddr = "127.0.0.1:0"
	opts.AdminAddr = "127.0.0.1:0"
	startEngine(t, opts, &eng)
	return &served{eng: eng, url: eng.URL(), admin: eng.AdminURL()}
}

// clusterExample compiles an example as knc build does for the cluster
// (addresses of the cluster's Services), and returns that table and the
// SVG knc graph -o svg draws of the example: its graph laid out by
// layout.LayOutDOT, which is what knc-draw runs.
func clusterExample(t testing.TB, name string) (*routing.Table, []byte) {
	t.Helper()
	res, err := compiler.Load(compiler.Options{Dir: filepath.Join("..", "..", "examples", name), Select: compiler.OneUnit, Command: "graph", Routes: &compiler.RouteOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid() {
		t.Fatal(res.Diagnostics)
	}
	table, diags := routes.Compile(res.Set, res.Config)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	var dot, svg bytes.Buffer
	if err := topology.WriteDOT(&dot, graph.Build(res.Set, res.Table)); err != nil {
		t.Fatal(err)
	}
	if err := layout.LayOutDOT(&svg, dot.Bytes(), layout.SVG); err != nil {
		t.Fatal(err)
	}
	return table, svg.Bytes()
}

// examples lists the directories of examples/, so that a new example is
// checked without being named here.
func examples(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatal("no example found")
	}
	return names
}

// drawnObjects is run in the page with an SVG element: the drawing's
// nodes, each by its id (or Graphviz's title for the legend) with its
// texts, and its edges, each from node to node with its label, sorted.
// The counts the page writes under the boxes are left out.
const drawnObjects = `(svg) => {
	const texts = (g) => JSON.stringify([...g.querySelectorAll('text:not(.knc-count)')].map((t) => t.textContent));
	const names = new Map();
	for (const g of svg.querySelectorAll('g.node')) {
		const title = g.querySelector(':scope > title').textContent;
		names.set(title, g.id.includes('/') || g.id.includes(':') ? g.id : title);
	}
	const nodes = [...svg.querySelectorAll('g.node')].map((g) => 'node ' + names.get(g.querySelector(':scope > title').textContent) + ' ' + texts(g));
	const edges = [...svg.querySelectorAll('g.edge')].map((g) => {
		const [from, to] = g.querySelector(':scope > title').textContent.split('->');
		return 'edge ' + names.get(from) + ' -> ' + names.get(to) + ' ' + texts(g);
	});
	return [...nodes.sort(), ...edges.sort()];
}`

// channelClass is the class knc graph writes beside a Channel's kind,
// which a routing table does not hold: the page draws the kind alone.
var channelClass = regexp.MustCompile(`"Channel · [A-Za-z]+"`)

// TestBrowserLaysOutTheRuntimePage loads, in Chromium, the page of every
// example as the runtime's image serves it, with no knc-draw: the page
// lays out the runtime's DOT with the WebAssembly Graphviz of its assets,
// and draws the nodes, edges and labels knc graph -o svg draws, with the
// page's counts under the boxes overlapping nothing.
func TestBrowserLaysOutTheRuntimePage(t *testing.T) {
	ctx := browser(t)
	for _, name := range examples(t) {
		t.Run(name, func(t *testing.T) {
			table, want := clusterExample(t, name)
			s := serveAsRuntime(t, table)
			if code, b := get(t, s.admin+"/ui/graph.svg"); code != http.StatusNotImplemented {
				t.Fatalf("GET /ui/graph.svg of the runtime: %d %s, want 501", code, b)
			}
			if err := chromedp.Do(ctx,
				chromedp.Navigate(s.admin+"/ui"),
				chromedp.WaitReady(`#graph svg`),
			); err != nil {
				t.Fatal(err)
			}
			got := evaluate[[]string](t, ctx, `(`+drawnObjects+`)(document.querySelector('#graph svg'))`)
			wantSVG, err := json.Marshal(string(want))
			if err != nil {
				t.Fatal(err)
			}
			wanted := evaluate[[]string](t, ctx, `(`+drawnObjects+`)(new DOMParser().parseFromString(`+string(wantSVG)+`, 'image/svg+xml').documentElement)`)
			for i := range wanted {
				wanted[i] = channelClass.ReplaceAllString(wanted[i], `"Channel"`)
			}
			if len(table.Brokers)+len(table.Channels) == 0 {
				// examples/plugin: its Brokers and Channel are of classes
				// another plugin runs, which the runtime does not serve:
				// its page draws nothing, and says so in its table.
				wanted = nil
			}
			if d := cmp.Diff(wanted, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("the page's drawing (-knc graph -o svg +page):\n%s", d)
			}
			checkPageDrawing(t, ctx, s.admin)
		})
	}
}

// checkPageDrawing checks the page loaded from base: each object the page
// lists has its box in the drawing and its row in the table, and a count
// under its box that meets no box, no text and no other count.
func checkPageDrawing(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	_, b := get(t, base+"/ui/api/topology")
	var listed struct{ Nodes []struct{ ID string } }
	if err := json.Unmarshal(b, &listed); err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, n := range listed.Nodes {
		found := evaluate[bool](t, ctx, fmt.Sprintf(`!!document.querySelector('#graph g.knc-node[data-id=%q]') && !!document.querySelector('#routes tr[data-id=%q]')`, n.ID, n.ID))
		if !found {
			missing = append(missing, n.ID)
		}
	}
	if len(missing) > 0 {
		t.Errorf("no box or row for %v", missing)
	}
	if len(listed.Nodes) == 0 {
		return
	}
	// The counts appear with the first state the event stream sends.
	poll(t, "the counts on the drawing", func() bool {
		return evaluate[int](t, ctx, `[...document.querySelectorAll('#graph text.knc-count')].filter((t) => t.textContent !== '').length`) == len(listed.Nodes)
	})
	if overlaps := evaluate[[]string](t, ctx, countOverlaps); len(overlaps) > 0 {
		t.Errorf("the counts the page adds to the drawing overlap:\n%s", strings.Join(overlaps, "\n"))
	}
}

// TestBrowserPageOfATopologyTooLargeToLayOut loads, in Chromium, the
// page of a runtime without a layout serving more Triggers than are laid
// out: the page says why there is no drawing and how to get one, and its
// table still lists every object.
func TestBrowserPageOfATopologyTooLargeToLayOut(t *testing.T) {
	ctx := browser(t)
	ok, _, _ := subscribers(t)
	s := serveAsRuntime(t, manyTriggers(topology.MaxLayoutNodes, ok))
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.admin+"/ui"),
		chromedp.WaitVisible(`#routes tr[data-id="Trigger/mesh/t000"]`),
	); err != nil {
		t.Fatal(err)
	}
	text := evaluate[string](t, ctx, `document.querySelector('#graph').textContent`)
	if !strings.Contains(text, "too large to lay out") || !strings.Contains(text, "pick a part") {
		t.Errorf("the drawing's place says %q, want why there is no drawing and to pick a part", text)
	}
	if rows := evaluate[int](t, ctx, `document.querySelectorAll('#routes tr[data-id]').length`); rows != topology.MaxLayoutNodes+1 {
		t.Errorf("%d rows, want the Broker and its %d Triggers", rows, topology.MaxLayoutNodes)
	}
}

// TestBrowserLayoutIsKncDraws lays out, in Chromium, the DOT a runtime
// serves for each example, as the page does, and holds the SVG to the one
// knc-draw writes of the same DOT: both run Graphviz 12.1.2, so that the
// drawings are the same, geometry and all, but for the build date
// Graphviz writes in a comment.
func TestBrowserLayoutIsKncDraws(t *testing.T) {
	ctx := browser(t)
	generator := regexp.MustCompile(`<!-- Generated by graphviz version [^\n]*`)
	for _, name := range examples(t) {
		t.Run(name, func(t *testing.T) {
			table, _ := clusterExample(t, name)
			s := serveAsRuntime(t, table)
			code, dot := get(t, s.admin+"/ui/graph.dot")
			if code != http.StatusOK {
				t.Fatalf("GET /ui/graph.dot: %d %s", code, dot)
			}
			var want bytes.Buffer
			if err := layout.LayOutDOT(&want, dot, layout.SVG); err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(ctx, chromedp.Navigate(s.admin+"/ui"), chromedp.WaitReady(`#routes`)); err != nil {
				t.Fatal(err)
			}
			dotJSON, err := json.Marshal(string(dot))
			if err != nil {
				t.Fatal(err)
			}
			got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`layOutInBrowser(`+string(dotJSON)+`)`, chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(generator.ReplaceAllString(want.String(), ""), generator.ReplaceAllString(got, "")); d != "" {
				t.Errorf("the browser's SVG (-knc-draw +browser):\n%s", d)
			}
		})
	}
}

// TestBrowserPageKeepsItsPolicy checks, on the page a runtime without a
// layout serves, that the Content-Security-Policy that lets the page
// compile its WebAssembly still forbids what it forbade: inline scripts,
// eval, and anything from another origin, here another server on the
// loopback interface, which sees no request.
func TestBrowserPageKeepsItsPolicy(t *testing.T) {
	ctx := browser(t)
	table, _ := clusterExample(t, "quickstart")
	s := serveAsRuntime(t, table)

	resp, err := http.Get(s.admin + "/ui")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	directives := map[string][]string{}
	for d := range strings.SplitSeq(resp.Header.Get("Content-Security-Policy"), ";") {
		if f := strings.Fields(d); len(f) > 0 {
			directives[f[0]] = f[1:]
		}
	}
	want := map[string][]string{
		"default-src":     {"'self'"},
		"script-src":      {"'self'", "'wasm-unsafe-eval'"},
		"img-src":         {"'self'", "data:"},
		"style-src":       {"'self'", "'unsafe-inline'"},
		"frame-ancestors": {"'none'"},
	}
	if d := cmp.Diff(want, directives); d != "" {
		t.Errorf("Content-Security-Policy (-want +got):\n%s", d)
	}

	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elsewhere.Add(1)
		w.Header().Set("Content-Type", "text/javascript")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_, _ = w.Write([]byte("window.fromElsewhere = true;"))
	}))
	t.Cleanup(other.Close)

	if err := chromedp.Do(ctx, chromedp.Navigate(s.admin+"/ui"), chromedp.WaitReady(`#graph svg`)); err != nil {
		t.Fatal(err)
	}
	tries := []struct{ what, expr string }{
		{"an inline script ran", `(() => {
			const s = document.createElement('script');
			s.textContent = 'window.inline = true;';
			document.head.append(s);
			return window.inline === true;
		})()`},
		{"eval ran", `(() => { try { return eval('true'); } catch (e) { return false; } })()`},
		{"a script of another origin ran", fmt.Sprintf(`new Promise((resolve) => {
			const s = document.createElement('script');
			s.src = %q;
			s.onload = () => resolve(window.fromElsewhere === true);
			s.onerror = () => resolve(false);
			document.head.append(s);
		})`, other.URL+"/script.js")},
		{"a fetch of another origin was answered", fmt.Sprintf(`fetch(%q).then(() => true, () => false)`, other.URL+"/data")},
		{"a worker of another origin started", fmt.Sprintf(`new Promise((resolve) => {
			try { new Worker(%q); resolve(true); } catch (e) { resolve(false); }
		})`, other.URL+"/worker.js")},
	}
	// DevTools lifts the policy's ban on eval for what it evaluates unless
	// told not to: each try runs as the page's own script would.
	underPolicy := func(p *runtime.EvaluateParams) {
		lift := false
		p.AllowUnsafeEvalBlockedByCSP = &lift
	}
	for _, try := range tries {
		ran, err := chromedp.Run(ctx, chromedp.Evaluate[bool](try.expr, chromedp.EvalAwaitPromise, underPolicy))
		if err != nil {
			t.Fatalf("%s: %v", try.what, err)
		}
		if ran {
			t.Errorf("%s: the policy must forbid it", try.what)
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other origin was asked %d times", n)
	}
}

// BenchmarkBrowserFirstDrawing loads, in Chromium, the page of the
// largest example as the runtime's image serves it, and reports the time
// from the start of the navigation to the first drawing (the page's
// knc-drawn mark), the DOT laid out in the browser: the median of b.N
// loads, each in a fresh browser. Run with -benchtime=5x.
func BenchmarkBrowserFirstDrawing(b *testing.B) {
	largest, most := "", -1
	var table *routing.Table
	for _, name := range examples(b) {
		t, _ := clusterExample(b, name)
		n := len(t.Brokers) + len(t.Channels) + len(t.PingSources)
		for _, br := range t.Brokers {
			n += len(br.Triggers)
		}
		for _, ch := range t.Channels {
			n += len(ch.Subscriptions)
		}
		if n > most {
			largest, most, table = name, n, t
		}
	}
	s := serveAsRuntime(b, table)
	var ms []float64
	for b.Loop() {
		ctx := browser(b)
		if err := chromedp.Do(ctx, chromedp.Navigate(s.admin+"/ui"), chromedp.WaitReady(`#graph svg`)); err != nil {
			b.Fatal(err)
		}
		v, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`performance.getEntriesByName('knc-drawn')[0].startTime`))
		if err != nil {
			b.Fatal(err)
		}
		ms = append(ms, v)
	}
	sort.Float64s(ms)
	b.ReportMetric(ms[len(ms)/2], "ms-to-drawing")
	b.Logf("examples/%s, %d objects: %v ms", largest, most, ms)
}
