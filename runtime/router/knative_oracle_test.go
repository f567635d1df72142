package router

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"sigs.k8s.io/yaml"

	"github.com/knc-dev/knc/internal/routing"
)

// The comparison with Knative's Broker filter. kfilter (from the shared
// tools, built from Knative Eventing's own pkg/broker/filter and the
// CloudEvents SDK it vendors) says whether a Trigger receives each of a list
// of structured-mode events; the Matcher must say the same, since someone
// moving Triggers from Knative's broker to knc expects the same events to
// reach the same subscribers.
//
// TestKnativeFilter runs a bounded number of generated pairs; `make
// fuzz-knative-filter` runs many more through the same test:
//
//	KNC_KNATIVE_FILTER_PAIRS  number of Trigger/event pairs (default 1200)
//	KNC_KNATIVE_FILTER_SEED   first seed (default 1); each Trigger has its own
//	KNC_KNATIVE_FILTER_OUT    directory for the minimal reproducers
//	KNC_SHARED_DIR            the shared directory holding tools/koracle
//	KNC_KFILTER               the kfilter binary itself

const eventsPerTrigger = 10

// knativeFilterAllowList holds the disagreement classes knc keeps on
// purpose, each with its reason; docs/filters.md says the same to users.
var knativeFilterAllowList = map[string]string{}

// findKfilter returns the kfilter binary, skipping the test (failing under
// CI=true) when it is nowhere to be found.
func findKfilter(t *testing.T) string {
	t.Helper()
	var looked []string
	if p := os.Getenv("KNC_KFILTER"); p != "" {
		return p
	}
	var dirs []string
	if d := os.Getenv("KNC_SHARED_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; filepath.Dir(d) != d; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				dirs = append(dirs, filepath.Join(filepath.Dir(d), "shared"))
				break
			}
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, "tools", "koracle", "bin", "kfilter")
		looked = append(looked, p)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("Knative's filter (kfilter) not found; looked at %s; set KNC_SHARED_DIR or KNC_KFILTER", strings.Join(looked, ", "))
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// knativeOracle runs kfilter.
type knativeOracle struct {
	bin string
	dir string
	mu  sync.Mutex
	n   int
}

// knativeVerdicts is kfilter's answer for one Trigger: one line per event,
// and the reason Knative's admission refuses the Trigger, if it does.
type knativeVerdicts struct {
	lines    []string
	rejected string
}

func (o *knativeOracle) run(tr routing.Trigger, events []json.RawMessage) (knativeVerdicts, error) {
	o.mu.Lock()
	o.n++
	base := filepath.Join(o.dir, strconv.Itoa(o.n))
	o.mu.Unlock()
	triggerYAML, err := knativeTriggerYAML(tr)
	if err != nil {
		return knativeVerdicts{}, err
	}
	if err := os.WriteFile(base+".yaml", triggerYAML, 0o600); err != nil {
		return knativeVerdicts{}, err
	}
	var in bytes.Buffer
	for _, e := range events {
		in.Write(e)
		in.WriteByte('\n')
	}
	cmd := exec.Command(o.bin, base+".yaml", "-")
	cmd.Stdin = &in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return knativeVerdicts{}, fmt.Errorf("kfilter %s: %w: %s", base+".yaml", err, stderr.String())
	}
	os.Remove(base + ".yaml")
	var v knativeVerdicts
	if out := strings.TrimRight(stdout.String(), "\n"); out != "" {
		v.lines = strings.Split(out, "\n")
	}
	if len(v.lines) != len(events) {
		return knativeVerdicts{}, fmt.Errorf("kfilter gave %d verdicts for %d events:\n%s", len(v.lines), len(events), stdout.String())
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if r, ok := strings.CutPrefix(l, "kfilter: trigger rejected by admission: "); ok {
			v.rejected = r
		}
	}
	return v, nil
}

// knativeTriggerYAML writes tr as the Knative Trigger it was compiled from.
func knativeTriggerYAML(tr routing.Trigger) ([]byte, error) {
	spec := map[string]any{
		"broker":     "default",
		"subscriber": map[string]any{"uri": "http://subscriber.example/"},
	}
	if tr.Attributes != nil {
		spec["filter"] = map[string]any{"attributes": tr.Attributes}
	}
	if len(tr.Filters) > 0 {
		spec["filters"] = tr.Filters
	}
	return yaml.Marshal(map[string]any{
		"apiVersion": "eventing.knative.dev/v1",
		"kind":       "Trigger",
		"metadata":   map[string]any{"name": tr.Name, "namespace": tr.Namespace},
		"spec":       spec,
	})
}

// kncVerdicts says what the Matcher decides for each event: "match",
// "no-match", or why it cannot ("refused: ..." when Compile refuses the
// Trigger, "error: ..." when the event is not a valid CloudEvent).
func kncVerdicts(tr routing.Trigger, events []json.RawMessage) []string {
	out := make([]string, len(events))
	m, err := Compile([]routing.Trigger{tr})
	for i, raw := range events {
		switch e, eventErr := readStructuredEvent(raw); {
		case eventErr != nil:
			out[i] = "error: " + eventErr.Error()
		case err != nil:
			out[i] = "refused: " + err.Error()
		case len(m.Match(e, nil)) == 1:
			out[i] = "match"
		default:
			out[i] = "no-match"
		}
	}
	return out
}

func readStructuredEvent(raw json.RawMessage) (*event.Event, error) {
	e := event.New()
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, err
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return &e, nil
}

// sameVerdict compares a Knative and a knc verdict. Both call an invalid
// event an error, in their own words. A Knative filter that panics (as
// Knative's CESQL filter does on a non-Boolean result) fails the Broker's
// request to deliver: the subscriber never gets the event, as on no-match.
func sameVerdict(knative, knc string) bool {
	if strings.HasPrefix(knative, "error: event:") {
		return strings.HasPrefix(knc, "error: ")
	}
	if strings.HasPrefix(knative, "error: filter panicked") {
		return knc == "no-match"
	}
	return knative == knc
}

// disagreement is one pair on which knc and Knative decide differently.
type disagreement struct {
	class           string
	trigger         routing.Trigger
	event           json.RawMessage
	knative, knc    string
	minimalTrigger  routing.Trigger
	minimalEvent    json.RawMessage
	minimalVerdicts [2]string
}

// classify names the known cause of a disagreement, trying the cheap
// explanations in turn.
func classify(tr routing.Trigger, raw json.RawMessage, knative, knc string) string {
	if strings.HasPrefix(knative, "error: filter panicked") {
		return "cesql-non-boolean-result"
	}
	if strings.HasPrefix(knc, "refused: ") {
		if strings.Contains(knc, "token recognition error") {
			return "cesql-lexer-skips-characters"
		}
		return "knc-refuses-admitted-trigger"
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		return "other"
	}
	if _, ok := fields["knativebrokerttl"]; ok {
		without := maps.Clone(fields)
		delete(without, "knativebrokerttl")
		if v := kncVerdicts(tr, []json.RawMessage{mustJSON(without)}); v[0] == knative {
			return "ttl-visible-to-filters"
		}
	}
	var leaves []filterLeaf
	if len(tr.Filters) > 0 {
		for _, f := range tr.Filters {
			leaves = appendLeaves(leaves, f)
		}
		for _, l := range leaves {
			if l.value == "" || l.name == "" {
				return "empty-value-filter-dropped"
			}
		}
	} else {
		for name, want := range tr.Attributes {
			got, present := fields[name]
			switch {
			case name == "time" && want == "" && !present:
				return "legacy-any-time-on-event-without-time"
			case want == "" && got == "":
				return "legacy-any-value-on-empty-string"
			case want != "" && present && !isString(got) && !isContextAttribute(name):
				return "legacy-value-against-typed-extension"
			}
			leaves = append(leaves, filterLeaf{"attributes", name, want})
		}
	}
	for _, l := range leaves {
		switch _, present := fields[l.name]; {
		case l.name == "time" && !present:
			return "unset-time-is-zero-time"
		case l.name == "datamediatype" || l.name == "datacontentencoding":
			return "knative-only-attributes"
		}
	}
	return "other"
}

// filterLeaf is one attribute comparison of a Trigger.
type filterLeaf struct{ dialect, name, value string }

func appendLeaves(out []filterLeaf, f routing.Filter) []filterLeaf {
	for dialect, m := range map[string]map[string]string{"exact": f.Exact, "prefix": f.Prefix, "suffix": f.Suffix} {
		for name, value := range m {
			out = append(out, filterLeaf{dialect, name, value})
		}
	}
	for _, c := range slices.Concat(f.All, f.Any) {
		out = appendLeaves(out, c)
	}
	if f.Not != nil {
		out = appendLeaves(out, *f.Not)
	}
	return out
}

func isString(v any) bool { _, ok := v.(string); return ok }

func isContextAttribute(name string) bool {
	switch name {
	case "specversion", "id", "source", "type", "subject", "time", "datacontenttype", "dataschema", "schemaurl", "datacontentencoding", "datamediatype":
		return true
	}
	return false
}

// minimize shrinks a disagreement to a smaller Trigger and event that still
// disagree and that Knative admits: one filter (or one legacy attribute)
// instead of many, and only the event attributes that matter.
func minimize(o *knativeOracle, d *disagreement) error {
	disagrees := func(tr routing.Trigger, raw json.RawMessage) (bool, [2]string, error) {
		v, err := o.run(tr, []json.RawMessage{raw})
		if err != nil {
			return false, [2]string{}, err
		}
		knc := kncVerdicts(tr, []json.RawMessage{raw})[0]
		return v.rejected == "" && !sameVerdict(v.lines[0], knc), [2]string{v.lines[0], knc}, nil
	}
	d.minimalTrigger, d.minimalEvent, d.minimalVerdicts = d.trigger, d.event, [2]string{d.knative, d.knc}
	// Smaller Triggers: each legacy attribute alone, each filter and
	// sub-filter alone.
	var candidates []routing.Trigger
	base := routing.Trigger{Source: d.trigger.Source}
	if len(d.trigger.Filters) == 0 {
		for name, value := range d.trigger.Attributes {
			if len(d.trigger.Attributes) > 1 {
				c := base
				c.Attributes = map[string]string{name: value}
				candidates = append(candidates, c)
			}
		}
	} else {
		var walk func(f routing.Filter)
		walk = func(f routing.Filter) {
			c := base
			c.Filters = []routing.Filter{f}
			candidates = append(candidates, c)
			for _, child := range slices.Concat(f.All, f.Any) {
				walk(child)
			}
			if f.Not != nil {
				walk(*f.Not)
			}
		}
		for _, f := range d.trigger.Filters {
			walk(f)
		}
		// The smallest first.
		slices.SortStableFunc(candidates, func(a, b routing.Trigger) int {
			return len(mustJSON(a.Filters)) - len(mustJSON(b.Filters))
		})
	}
	for _, c := range candidates {
		ok, verdicts, err := disagrees(c, d.event)
		if err != nil {
			return err
		}
		if ok {
			d.minimalTrigger, d.minimalVerdicts = c, verdicts
			break
		}
	}
	// A smaller event: drop the optional attributes one at a time.
	var fields map[string]any
	if err := json.Unmarshal(d.minimalEvent, &fields); err != nil {
		return err
	}
	for _, name := range slices.Sorted(mapKeys(fields)) {
		switch name {
		case "specversion", "id", "source", "type":
			continue
		}
		value := fields[name]
		delete(fields, name)
		raw := json.RawMessage(mustJSON(fields))
		ok, verdicts, err := disagrees(d.minimalTrigger, raw)
		if err != nil {
			return err
		}
		if ok {
			d.minimalEvent, d.minimalVerdicts = raw, verdicts
		} else {
			fields[name] = value
		}
	}
	return nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func (d *disagreement) reproducer() string {
	y, _ := knativeTriggerYAML(d.minimalTrigger)
	return fmt.Sprintf("# class %s: Knative %s, knc %s\n%s---\n# event\n%s\n", d.class, d.minimalVerdicts[0], d.minimalVerdicts[1], y, d.minimalEvent)
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q is not a non-negative integer", name, s)
	}
	return n
}

// TestKnativeFilter compares the Matcher with Knative's Broker filter on
// generated Trigger/event pairs and fails on any disagreement whose class is
// not in knativeFilterAllowList. It prints the count of each class and a
// minimal reproducer of each.
func TestKnativeFilter(t *testing.T) {
	oracle := &knativeOracle{bin: findKfilter(t), dir: t.TempDir()}
	pairs := envInt(t, "KNC_KNATIVE_FILTER_PAIRS", 1200)
	seed := uint64(envInt(t, "KNC_KNATIVE_FILTER_SEED", 1))
	outDir := os.Getenv("KNC_KNATIVE_FILTER_OUT")

	type result struct {
		compared, rejected int
		found              []disagreement
		err                error
	}
	triggers := (pairs + eventsPerTrigger - 1) / eventsPerTrigger
	results := make([]result, triggers)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 2 {
		wg.Go(func() {
			for i := range next {
				g := newKnativeGen(seed + uint64(i))
				tr := g.trigger(fmt.Sprintf("t%d", seed+uint64(i)))
				events := make([]json.RawMessage, eventsPerTrigger)
				for j := range events {
					events[j] = g.event()
				}
				kv, err := oracle.run(tr, events)
				if err != nil {
					results[i].err = err
					continue
				}
				if kv.rejected != "" {
					// A Broker never sees a Trigger its admission refuses.
					results[i].rejected += len(events)
					continue
				}
				knc := kncVerdicts(tr, events)
				for j := range events {
					results[i].compared++
					if !sameVerdict(kv.lines[j], knc[j]) {
						results[i].found = append(results[i].found, disagreement{
							class: classify(tr, events[j], kv.lines[j], knc[j]), trigger: tr, event: events[j],
							knative: kv.lines[j], knc: knc[j],
						})
					}
				}
			}
		})
	}
	for i := range triggers {
		next <- i
	}
	close(next)
	wg.Wait()

	compared, rejected := 0, 0
	byClass := map[string][]disagreement{}
	var errs []error
	for _, r := range results {
		compared += r.compared
		rejected += r.rejected
		errs = append(errs, r.err)
		for _, d := range r.found {
			byClass[d.class] = append(byClass[d.class], d)
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeds %d..%d: %d pairs compared; %d more left out, as Knative's admission refuses their Trigger", seed, seed+uint64(triggers)-1, compared, rejected)
	for _, class := range slices.Sorted(mapKeys(byClass)) {
		found := byClass[class]
		d := found[0]
		if err := minimize(oracle, &d); err != nil {
			t.Fatal(err)
		}
		reason, allowed := knativeFilterAllowList[class]
		if allowed {
			t.Logf("%d disagreements of class %s (allowed: %s); the smallest:\n%s", len(found), class, reason, d.reproducer())
		} else {
			t.Errorf("%d disagreements of class %s; the smallest:\n%s", len(found), class, d.reproducer())
		}
		if outDir != "" {
			if err := writeReproducers(outDir, class, found, d); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// writeReproducers writes the minimal reproducer of a class and every
// disagreement of it, unminimized, one pair per file.
func writeReproducers(dir, class string, found []disagreement, minimal disagreement) error {
	if err := os.MkdirAll(filepath.Join(dir, class), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, class, "minimal.yaml"), []byte(minimal.reproducer()), 0o644); err != nil {
		return err
	}
	for i, d := range found {
		d.minimalTrigger, d.minimalEvent, d.minimalVerdicts = d.trigger, d.event, [2]string{d.knative, d.knc}
		if err := os.WriteFile(filepath.Join(dir, class, fmt.Sprintf("%04d.yaml", i)), []byte(d.reproducer()), 0o644); err != nil {
			return err
		}
	}
	return nil
}
