package ui

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/knc-dev/knc/internal/redact"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/runtime/status"
)

//go:embed static
var static embed.FS

// contentSecurityPolicy lets the page load nothing from elsewhere and run
// no inline script, and nothing may frame it. 'wasm-unsafe-eval' lets its
// scripts compile the WebAssembly Graphviz among its own assets, which
// lays out the drawing when the runtime does not; it allows neither eval
// nor a script from anywhere else.
const contentSecurityPolicy = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"

// DefaultInterval is how often the event stream sends the counters.
const DefaultInterval = time.Second

// Inputs are what the page shows, read on each request: the runtime hands
// over these functions rather than itself, so that the page depends on no
// part of the engine.
type Inputs struct {
	// Table returns the routing table being served; nil while there is
	// none.
	Table func() *routing.Table
	// Statuses returns the status of every object, as /status serves it.
	Statuses func() []status.Report
	// Gatherer is the registry /metrics serves.
	Gatherer prometheus.Gatherer
	// Recent, when set, keeps the last events each Trigger or
	// Subscription matched; nil shows none.
	Recent *Recent
	// Interval is how often /ui/events sends the state; 0 means
	// DefaultInterval.
	Interval time.Duration
	// Graph, when set, returns the graph knc graph makes of the project a
	// table was compiled from, which names the objects the table holds
	// only the addresses of; nil, or a nil result, draws the table alone.
	Graph func(*routing.Table) *topology.Graph
	// Draw lays out the drawing /ui/graph.svg serves; nil serves none,
	// and the page shows its table alone.
	Draw Draw
}

// Draw writes g laid out as SVG, or gives up when ctx is done; ctx ends
// when the request's client leaves or the server closes. The layout is
// given to the page rather than imported, so that a binary that serves
// the page without it links no layout engine: internal/topology/drawing's
// WriteSVG, which runs knc-draw and kills it when ctx ends, is one.
type Draw func(ctx context.Context, w io.Writer, g *topology.Graph) error

// ErrNoDrawing is the error of the drawing of a runtime given no Draw, or
// whose Draw has no layout engine to run (wrapped): the page then lays
// out /ui/graph.dot itself, in the browser.
var ErrNoDrawing = errors.New("this runtime does not lay out its drawing: the page lays out /ui/graph.dot in the browser, and `knc graph -o svg` draws it too")

// Handler serves the page:
//
//	GET /ui                the page
//	GET /ui/static/…       its script and style sheet
//	GET /ui/graph.svg      the topology, drawn as knc graph -o svg draws it;
//	                       501 Not Implemented from a runtime that does not draw
//	GET /ui/graph.dot      the same drawing before its layout, which the page
//	                       lays out in the browser when the runtime does not
//	GET /ui/api/topology   {"nodes": [...]}: every Broker, Channel, Trigger and Subscription,
//	                       source, Sequence and Parallel with its steps or branches
//	GET /ui/api/state      {"nodes": {ID: {"ready": ..., "counts": ...}}}
//	GET /ui/api/recent?id= the last events a route matched, when kept
//	GET /ui/events         the state as server-sent events, every Interval
//
// The page, the drawing, the topology, the state and the events take the
// filters of knc graph as query parameters (see parseSelection), and then
// show that part of the topology alone; one that names nothing is refused
// with 400 Bad Request, saying why.
type Handler struct {
	in     Inputs
	assets http.Handler
	// assetTags are the entity tags of the assets, by their path below
	// /ui/static/: a browser asks again with If-None-Match and is
	// answered 304 Not Modified, rather than fetching the page's Graphviz
	// (740 kB) at every load.
	assetTags map[string]string

	mu       sync.Mutex
	drawnFor *routing.Table
	drawing  *drawing
	// selections are the drawings of parts of the table's topology, by
	// selectionKey, dropped with the table.
	selections map[string]*drawing
	// layingOut holds a token while a layout runs: one at a time, since
	// each may take a core and hundreds of megabytes.
	layingOut chan struct{}
}

// maxSelections bounds the drawings of parts kept: each is laid out once,
// and a page asks for the same part again at every reload.
const maxSelections = 32

// drawing is a table's topology and its SVG, laid out once per table
// when a request first asks for the SVG.
type drawing struct {
	top *view

	mu   sync.Mutex
	done bool
	svg  []byte
	err  error

	// dot is the drawing before its layout, written once.
	dot struct {
		once sync.Once
		b    []byte
		err  error
	}
}

// DOT returns the drawing as the DOT knc-draw lays out, refusing, as the
// layout on the server does, a topology too large to lay out: the browser
// would spend as long on it.
func (d *drawing) DOT() ([]byte, error) {
	d.dot.once.Do(func() {
		if err := topology.CheckSize(d.top.graph); err != nil {
			d.dot.err = fmt.Errorf("%w; pick a part: a focus, some Brokers or some namespaces", err)
			return
		}
		var buf bytes.Buffer
		d.dot.err = topology.WriteDOT(&buf, d.top.graph)
		d.dot.b = buf.Bytes()
	})
	return d.dot.b, d.dot.err
}

// New returns the handler of the page.
func New(in Inputs) *Handler {
	if in.Interval <= 0 {
		in.Interval = DefaultInterval
	}
	if in.Table == nil {
		in.Table = func() *routing.Table { return nil }
	}
	if in.Statuses == nil {
		in.Statuses = func() []status.Report { return nil }
	}
	if in.Gatherer == nil {
		in.Gatherer = prometheus.NewRegistry()
	}
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded directory is part of the source
	}
	return &Handler{in: in, assets: http.StripPrefix("/ui/static/", http.FileServerFS(sub)), assetTags: entityTags(sub), layingOut: make(chan struct{}, 1)}
}

// entityTags returns the entity tag of each file of assets, by its path:
// a digest of its content, which the binary fixes.
func entityTags(assets fs.FS) map[string]string {
	tags := map[string]string{}
	err := fs.WalkDir(assets, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(assets, path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		tags[path] = `"` + hex.EncodeToString(sum[:16]) + `"`
		return nil
	})
	if err != nil {
		panic(err) // the embedded directory is part of the source
	}
	return tags
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
	switch p := r.URL.Path; {
	case p == "/ui" || p == "/ui/":
		h.serveAsset(w, r, "index.html")
	case strings.HasPrefix(p, "/ui/static/"):
		if tag, ok := h.assetTags[strings.TrimPrefix(p, "/ui/static/")]; ok {
			w.Header().Set("ETag", tag)
			w.Header().Set("Cache-Control", "no-cache")
		}
		h.assets.ServeHTTP(w, r)
	case p == "/ui/graph.svg":
		h.serveSVG(w, r)
	case p == "/ui/graph.dot":
		h.serveDOT(w, r)
	case p == "/ui/api/topology":
		d, ok := h.requested(w, r)
		if !ok {
			return
		}
		writeJSON(w, struct {
			Nodes []Node `json:"nodes"`
			// RecentEvents is how many events per route are kept, 0
			// when none are.
			RecentEvents int `json:"recentEvents"`
		}{d.top.nodes, h.in.Recent.Size()})
	case p == "/ui/api/state":
		sel, ok := h.selection(w, r)
		if !ok {
			return
		}
		st, err := h.state(sel)
		if _, refused := errors.AsType[*topology.SelectionError](err); refused {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, st)
	case p == "/ui/api/recent":
		h.serveRecent(w, r)
	case p == "/ui/events":
		h.serveEvents(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (h *Handler) serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	b, err := static.ReadFile("static/" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b)
}

// selection reads the selection of a request, answering 400 Bad Request
// when it is malformed.
func (h *Handler) selection(w http.ResponseWriter, r *http.Request) (topology.Selection, bool) {
	sel, err := parseSelection(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return sel, false
	}
	return sel, true
}

// requested returns the drawing of the part of the topology a request
// asks for, answering 400 Bad Request when it names nothing.
func (h *Handler) requested(w http.ResponseWriter, r *http.Request) (*drawing, bool) {
	sel, ok := h.selection(w, r)
	if !ok {
		return nil, false
	}
	d, err := h.current(sel)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	return d, true
}

// current returns the drawing of the part sel picks of the table being
// served, drawing it when the table changed or the part is new. The error
// is a *topology.SelectionError.
func (h *Handler) current(sel topology.Selection) (*drawing, error) {
	t := h.in.Table()
	h.mu.Lock()
	defer h.mu.Unlock()
	whole := h.whole(t)
	key := selectionKey(sel)
	if key == "" {
		return whole, nil
	}
	if d, ok := h.selections[key]; ok {
		return d, nil
	}
	g, err := whole.top.graph.Select(sel)
	if err != nil {
		return nil, err
	}
	d := &drawing{top: whole.top.selected(g)}
	if len(h.selections) >= maxSelections {
		clear(h.selections)
	}
	h.selections[key] = d
	return d, nil
}

// layoutTimeout bounds one layout of the page's drawing.
const layoutTimeout = 30 * time.Second

// svg returns d laid out, laying it out on the first call that gets that
// far. The layout is the request's: when its client leaves or the server
// shuts down, the layout stops (Draw ends its process) and the next
// request lays it out again. What the layout itself ends with, a drawing,
// a topology too large or a layout longer than layoutTimeout, is kept for
// every request after it until the table changes.
func (h *Handler) svg(ctx context.Context, d *drawing) ([]byte, error) {
	if h.in.Draw == nil {
		return nil, ErrNoDrawing
	}
	// One layout at a time; a request whose client leaves while it
	// waits gives up its turn.
	select {
	case h.layingOut <- struct{}{}:
		defer func() { <-h.layingOut }()
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", topology.ErrLayoutStopped, context.Cause(ctx))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return d.svg, d.err
	}
	layoutCtx, cancel := context.WithTimeoutCause(ctx, layoutTimeout,
		fmt.Errorf("it took longer than %s", layoutTimeout))
	defer cancel()
	var buf bytes.Buffer
	err := h.in.Draw(layoutCtx, &buf, d.top.graph)
	if ctx.Err() != nil {
		// The request ended, not the layout: nothing to keep.
		return nil, fmt.Errorf("%w: %w", topology.ErrLayoutStopped, context.Cause(ctx))
	}
	if errors.Is(err, topology.ErrTooLargeToLayOut) || errors.Is(err, topology.ErrLayoutStopped) {
		err = fmt.Errorf("%w; pick a part: a focus, some Brokers or some namespaces", err)
	}
	d.done, d.err = true, err
	if err == nil {
		d.svg = buf.Bytes()
	}
	return d.svg, d.err
}

// whole returns the drawing of the whole topology of t, drawing it when
// the table changed. h.mu is held.
func (h *Handler) whole(t *routing.Table) *drawing {
	if h.drawing != nil && h.drawnFor == t {
		return h.drawing
	}
	var drawn *topology.Graph
	if h.in.Graph != nil {
		drawn = h.in.Graph(t)
	}
	d := &drawing{top: buildView(t, drawn)}
	h.drawnFor, h.drawing, h.selections = t, d, map[string]*drawing{}
	ids := make(map[string]bool, len(d.top.nodes))
	for _, n := range d.top.nodes {
		ids[n.ID] = true
	}
	h.in.Recent.Forget(func(id string) bool { return ids[id] })
	return d
}

func (h *Handler) serveSVG(w http.ResponseWriter, r *http.Request) {
	d, ok := h.requested(w, r)
	if !ok {
		return
	}
	svg, err := h.svg(r.Context(), d)
	switch {
	case errors.Is(err, ErrNoDrawing):
		http.Error(w, err.Error(), http.StatusNotImplemented)
		return
	case r.Context().Err() != nil:
		// Nobody is left to answer.
		return
	case err != nil:
		http.Error(w, "drawing the topology: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	_, _ = w.Write(svg)
}

func (h *Handler) serveDOT(w http.ResponseWriter, r *http.Request) {
	d, ok := h.requested(w, r)
	if !ok {
		return
	}
	dot, err := d.DOT()
	if err != nil {
		http.Error(w, "drawing the topology: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/vnd.graphviz; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(dot)
}

// NodeState is what changes of a node while the table stays.
type NodeState struct {
	// Ready is the node's Ready condition; nil before the runtime
	// reported one.
	Ready  *status.Condition `json:"ready,omitempty"`
	Counts Counts            `json:"counts"`
	// Kept are its kept letters by reason (Counts.Kept in all), from the
	// metrics; the letters themselves are listed by the kept-letter API of
	// the admin listener, with its authorisation.
	Kept map[string]uint64 `json:"kept,omitempty"`
}

// State is every node's state at one moment.
type State struct {
	Time  time.Time             `json:"time"`
	Nodes map[string]*NodeState `json:"nodes"`
}

func (h *Handler) state(sel topology.Selection) (*State, error) {
	d, err := h.current(sel)
	if err != nil {
		return nil, err
	}
	counts, kept, err := readCounts(h.in.Gatherer)
	if err != nil {
		return nil, err
	}
	// Indexed once: the state is made every Interval for each page open,
	// and a table may hold thousands of objects.
	statuses := h.in.Statuses()
	ready := make(map[string]*status.Condition, len(statuses))
	for i := range statuses {
		o := &statuses[i]
		if c := o.ConditionOf(status.ConditionReady); c != nil {
			ready[nodeID(o.Kind, o.Metadata.Namespace, o.Metadata.Name)] = c
		}
	}
	st := &State{Time: time.Now().UTC(), Nodes: make(map[string]*NodeState, len(d.top.nodes))}
	for _, n := range d.top.nodes {
		ns := &NodeState{}
		counted := n.ID
		if id, ok := d.top.countedAs[n.ID]; ok {
			counted = id
		}
		if c := counts[counted]; c != nil {
			ns.Counts = *c
		}
		ns.Kept = kept[counted]
		if c := ready[nodeID(n.Kind, n.Namespace, n.Name)]; c != nil {
			// Masked as status.Redacted masks a condition for /status.
			cond := *c
			cond.Message = redact.Text(cond.Message)
			ns.Ready = &cond
		}
		st.Nodes[n.ID] = ns
	}
	return st, nil
}

// serveEvents sends the state at once, then every Interval while it
// changes, until the client goes away or the listener closes.
func (h *Handler) serveEvents(w http.ResponseWriter, r *http.Request) {
	sel, ok := h.selection(w, r)
	if !ok {
		return
	}
	if _, err := h.current(sel); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc := http.NewResponseController(w)
	// The listener's write timeout bounds a response; a stream has none.
	if err := rc.SetWriteDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(h.in.Interval)
	defer tick.Stop()
	var last []byte
	for {
		st, err := h.state(sel)
		var data []byte
		if err == nil {
			data, err = json.Marshal(st.Nodes)
		}
		switch {
		case err != nil:
			_, err = fmt.Fprintf(w, "event: failure\ndata: %s\n\n", jsonString(err.Error()))
		case !bytes.Equal(data, last):
			// The table's drawing may have changed with the state: the
			// page reloads its topology when the ids differ.
			_, err = fmt.Fprintf(w, "event: state\ndata: %s\n\n", data)
			last = data
		default:
			// A comment keeps proxies from closing an idle stream.
			_, err = fmt.Fprint(w, ": idle\n\n")
		}
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

func (h *Handler) serveRecent(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if h.in.Recent.Size() == 0 {
		http.Error(w, "recent events are not kept: set runtime.ui.recentEvents in knc.yaml", http.StatusNotFound)
		return
	}
	writeJSON(w, struct {
		Events []RecentEvent `json:"events"`
	}{h.in.Recent.Events(id)})
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(append(b, '\n'))
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
