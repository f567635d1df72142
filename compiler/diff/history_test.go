package diff_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/diff"
	"github.com/knc-dev/knc/compiler/internal/gitrev"
	"github.com/knc-dev/knc/internal/gittest"
)

var update = os.Getenv("KNC_UPDATE") != ""

// The project every history starts from: a config at the root and the
// manifests below eventing/, so the config is found above the path given.
var baseProject = map[string]string{
	"knc.yaml": "apiVersion: config.knc.dev/v1alpha1\nkind: Config\ndefaultNamespace: shop\n",
	"eventing/brokers.yaml": `apiVersion: eventing.knative.dev/v1
kind: Broker
metadata:
  name: default
spec:
  delivery:
    retry: 3
    backoffDelay: PT0.2S
    deadLetterSink:
      ref: {apiVersion: v1, kind: Service, name: dlq}
---
apiVersion: eventing.knative.dev/v1
kind: Broker
metadata:
  name: audit
`,
	"eventing/triggers.yaml": `apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: orders
spec:
  broker: default
  filter:
    attributes:
      type: order.created
  subscriber:
    ref: {apiVersion: v1, kind: Service, name: app}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: everything
spec:
  broker: audit
  subscriber:
    ref: {apiVersion: v1, kind: Service, name: auditor}
`,
	"eventing/channels.yaml": `apiVersion: messaging.knative.dev/v1
kind: Channel
metadata:
  name: notify
---
apiVersion: messaging.knative.dev/v1
kind: Channel
metadata:
  name: urgent
---
apiVersion: messaging.knative.dev/v1
kind: Subscription
metadata:
  name: email
spec:
  channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: notify}
  subscriber:
    ref: {apiVersion: v1, kind: Service, name: mailer}
---
` + smsSubscription,
	"eventing/services.yaml": services("app", "auditor", "mailer", "sms", "dlq") + `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: broker-config
data:
  replicas: "3"
`,
}

// smsSubscription is the last object of eventing/channels.yaml, which a
// step of the history removes.
const smsSubscription = `apiVersion: messaging.knative.dev/v1
kind: Subscription
metadata:
  name: sms
spec:
  channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: notify}
  subscriber:
    ref: {apiVersion: v1, kind: Service, name: sms}
  reply:
    ref: {apiVersion: eventing.knative.dev/v1, kind: Broker, name: default}
`

func services(names ...string) string {
	var docs []string
	for _, n := range names {
		docs = append(docs, "apiVersion: v1\nkind: Service\nmetadata:\n  name: "+n+"\nspec:\n  ports: [{port: 80}]\n")
	}
	return strings.Join(docs, "---\n")
}

// step is one commit of a history, compared with the one before it.
type step struct {
	name string
	// edit changes the files of the previous commit.
	edit func(files map[string]string)
	// violations are the field paths of the immutable-field errors.
	violations []string
	// routes are the route changes, as +/- lines.
	routes []string
	// effects are the filter changes, as TRIGGER: EFFECT.
	effects []string
}

func replace(file, old, new string) func(map[string]string) {
	return func(files map[string]string) {
		if !strings.Contains(files[file], old) {
			panic("history: " + file + " does not contain " + old)
		}
		files[file] = strings.Replace(files[file], old, new, 1)
	}
}

var history = []step{{
	name:    "filter-narrowed",
	edit:    replace("eventing/triggers.yaml", "      type: order.created\n", "      type: order.created\n      source: web\n"),
	effects: []string{"orders: matches less"},
}, {
	name: "filter-widened-to-prefix",
	edit: replace("eventing/triggers.yaml", "  filter:\n    attributes:\n      type: order.created\n      source: web\n",
		"  filters:\n  - prefix: {type: order.}\n"),
	effects: []string{"orders: matches more"},
}, {
	name: "trigger-added",
	edit: func(files map[string]string) {
		files["eventing/refunds.yaml"] = `apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: refunds
spec:
  broker: default
  filters:
  - exact: {type: refund.requested}
  subscriber:
    ref: {apiVersion: v1, kind: Service, name: app}
    uri: /refunds
`
	},
	routes: []string{"+ Broker shop/default → Trigger refunds → http://app.shop.svc.cluster.local/refunds"},
}, {
	name:   "subscription-removed",
	edit:   replace("eventing/channels.yaml", "---\n"+smsSubscription, ""),
	routes: []string{"- Channel shop/notify → Subscription sms → http://sms.shop.svc.cluster.local/ (reply to http://knc-ingress.shop.svc.cluster.local/brokers/shop/default)"},
}, {
	name:       "broker-class-changed",
	edit:       replace("eventing/brokers.yaml", "  name: audit\n", "  name: audit\n  annotations:\n    eventing.knative.dev/broker.class: Kafka\n"),
	violations: []string{"metadata.annotations[eventing.knative.dev/broker.class]"},
	// Knative's Kafka broker resolves the same subscriber; only who runs
	// it changes, so the route stays.
}, {
	name:       "broker-config-changed",
	edit:       replace("eventing/brokers.yaml", "  name: default\nspec:\n", "  name: default\nspec:\n  config: {apiVersion: v1, kind: ConfigMap, name: broker-config}\n"),
	violations: []string{"spec.config"},
}, {
	name:       "trigger-broker-changed",
	edit:       replace("eventing/triggers.yaml", "  broker: audit\n", "  broker: default\n"),
	violations: []string{"spec.broker"},
	routes: []string{
		"- Broker shop/audit → Trigger everything → Service shop/auditor",
		"+ Broker shop/default → Trigger everything → http://auditor.shop.svc.cluster.local/",
	},
}, {
	name:       "channel-template-changed",
	edit:       replace("eventing/channels.yaml", "  name: urgent\n", "  name: urgent\nspec:\n  channelTemplate: {apiVersion: messaging.knative.dev/v1, kind: InMemoryChannel}\n"),
	violations: []string{"spec.channelTemplate"},
}, {
	name:       "subscription-channel-changed",
	edit:       replace("eventing/channels.yaml", "kind: Channel, name: notify}\n  subscriber:\n    ref: {apiVersion: v1, kind: Service, name: mailer}", "kind: Channel, name: urgent}\n  subscriber:\n    ref: {apiVersion: v1, kind: Service, name: mailer}"),
	violations: []string{"spec.channel"},
	routes: []string{
		"- Channel shop/notify → Subscription email → http://mailer.shop.svc.cluster.local/",
		"+ Channel shop/urgent → Subscription email → http://mailer.shop.svc.cluster.local/",
	},
}, {
	name: "trigger-renamed",
	edit: func(files map[string]string) {
		files["eventing/refunds.yaml"] = strings.Replace(files["eventing/refunds.yaml"], "name: refunds\n", "name: refund-requests\n", 1)
	},
	routes: []string{
		"+ Broker shop/default → Trigger refund-requests → http://app.shop.svc.cluster.local/refunds",
		"- Broker shop/default → Trigger refunds → http://app.shop.svc.cluster.local/refunds",
	},
}, {
	name: "broker-delivery-changed",
	edit: replace("eventing/brokers.yaml", "    retry: 3\n    backoffDelay: PT0.2S\n", "    retry: 5\n    backoffDelay: PT0.200S\n"),
}, {
	name: "comments-only",
	edit: replace("eventing/brokers.yaml", "kind: Broker\n", "kind: Broker # the shop's Broker\n"),
}}

// TestHistory commits each step of a history into a real git repository
// and compares every commit with the one before it, as knc diff --base
// HEAD~1 does: the text report is compared with a golden file, the
// immutable-field errors, routes and filter effects with the step's.
func TestHistory(t *testing.T) {
	r, _ := baseRepo(t)
	files := maps.Clone(baseProject)
	t.Chdir(r.Dir)
	for _, s := range history {
		t.Run(s.name, func(t *testing.T) {
			s.edit(files)
			r.Write(files)
			r.Commit(s.name)
			rep := compare(t, "HEAD~1", "eventing")

			for _, d := range rep.Violations {
				if !strings.Contains(d.Message, "must be deleted and re-created (events in flight may be lost)") {
					t.Errorf("violation %q does not say to delete and re-create", d)
				}
				if d.Pos.File == "" || d.Pos.Line == 0 {
					t.Errorf("violation %q has no position", d)
				}
			}
			for _, c := range []struct {
				what      string
				want, got []string
			}{
				{"immutable-field errors", s.violations, linesOf(rep.Violations, func(d diag.Diagnostic) string { return d.Path })},
				{"routes", s.routes, linesOf(rep.Routes, routeLine)},
				{"filter effects", s.effects, linesOf(rep.Filters, func(f diff.FilterChange) string { return f.Trigger + ": " + f.Effect })},
			} {
				if diff := cmp.Diff(c.want, c.got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", c.what, diff)
				}
			}
			if rep.Different != (s.name != "comments-only") {
				t.Errorf("Different = %v", rep.Different)
			}

			var text bytes.Buffer
			if err := rep.WriteText(&text, false); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("history", s.name+".txt"), text.String())

			// The JSON report holds the same.
			b, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			var decoded diff.Report
			if err := json.Unmarshal(b, &decoded); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(rep.Summary, decoded.Summary); diff != "" {
				t.Errorf("JSON summary (-want +got):\n%s", diff)
			}
		})
	}
}

// routeLine writes a route change as a step expects it: "+ " for a route
// gained, "- " for one lost.
func routeLine(rc diff.RouteChange) string {
	if rc.Change == diff.Lost {
		return "- " + rc.String()
	}
	return "+ " + rc.String()
}

// linesOf writes each item as a line, for cmp.Diff; none make nil, as an
// unset field of a step is.
func linesOf[T any](items []T, line func(T) string) []string {
	var lines []string
	for _, item := range items {
		lines = append(lines, line(item))
	}
	return lines
}

// TestRenameIsNoViolation checks that a rename is an object removed and
// another added, and no immutable-field change, even when the object under
// the new name has another Broker (which also makes it no mere rename).
func TestRenameIsNoViolation(t *testing.T) {
	rep := compareWithBase(t, map[string]string{"eventing/triggers.yaml": strings.Replace(strings.Replace(baseProject["eventing/triggers.yaml"], "name: everything", "name: everything-v2", 1), "broker: audit", "broker: default", 1)})
	if len(rep.Violations) != 0 {
		t.Errorf("a rename reported immutable-field errors: %v", rep.Violations)
	}
	got := linesOf(rep.Objects, func(o diff.ObjectChange) string { return o.Change + " " + o.Title() + " " + o.RenamedFrom })
	want := []string{"removed Trigger shop/everything ", "added Trigger shop/everything-v2 "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}

// baseRepo is a git repository whose one commit, base, holds baseProject.
func baseRepo(t *testing.T) (r *gittest.Repo, base string) {
	t.Helper()
	r = gittest.New(t)
	r.Write(baseProject)
	return r, r.Commit("base")
}

// compareWithBase writes files over baseProject in the working tree of a
// baseRepo and compares the tree with the commit, as knc diff --base HEAD
// eventing does there.
func compareWithBase(t *testing.T, files map[string]string) *diff.Report {
	t.Helper()
	r, _ := baseRepo(t)
	r.Write(files)
	t.Chdir(r.Dir)
	return compare(t, "HEAD", "eventing")
}

// compare runs the comparison knc diff --base rev PATHS makes, from the
// current directory.
func compare(t *testing.T, rev string, paths ...string) *diff.Report {
	t.Helper()
	head, err := compiler.Load(compiler.Options{Paths: paths, Routes: &compiler.RouteOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if !head.Valid() {
		t.Fatalf("the working tree does not validate:\n%v", head.Diagnostics)
	}
	base, err := diff.LoadRevision(context.Background(), rev, compiler.Options{Paths: paths})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := base.Close(); err != nil {
			t.Error(err)
		}
	})
	if !base.Result.Valid() {
		t.Fatalf("%s does not validate:\n%v", rev, base.Result.Diagnostics)
	}
	// The routing tables are the routes stage's, as knc diff --base
	// reads them.
	hs, diags := diff.PrepareUnits(head)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	bs, diags := diff.PrepareUnits(base.Result)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	rep := diff.CompareUnits(bs, hs)
	rep.Base, rep.Head = rev, "working tree"
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rep.Relative(wd)
	return rep
}

// golden compares got with testdata/NAME, which KNC_UPDATE=1 rewrites.
func golden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join(testdata, name)
	if update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v; create it with KNC_UPDATE=1", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s is stale; review the change and regenerate it with KNC_UPDATE=1 (-want +got):\n%s", file, diff)
	}
}

// testdata is the absolute path of testdata, since the tests change
// directory into their repositories.
var testdata = func() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Join(wd, "testdata")
}()

func TestShallowClone(t *testing.T) {
	r, first := baseRepo(t)
	r.Write(map[string]string{"eventing/triggers.yaml": strings.Replace(baseProject["eventing/triggers.yaml"], "broker: audit", "broker: default", 1)})
	r.Commit("move a trigger")

	// A depth-1 clone holds only the last commit.
	clone := r.ShallowClone(1)
	t.Chdir(clone.Dir)
	_, err := diff.LoadRevision(context.Background(), first, compiler.Options{Paths: []string{"eventing"}})
	if !errors.Is(err, gitrev.ErrUnknownRevision) {
		t.Fatalf("LoadRevision of a commit outside the shallow clone = %v, want ErrUnknownRevision", err)
	}
	for _, want := range []string{"shallow clone", "git fetch --deepen", "fetch-depth: 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	// Deep enough, the same comparison works.
	deeper := r.ShallowClone(2)
	t.Chdir(deeper.Dir)
	rep := compare(t, first, "eventing")
	if len(rep.Violations) != 1 || rep.Violations[0].Path != "spec.broker" {
		t.Errorf("violations in a depth-2 clone = %v, want the spec.broker change", rep.Violations)
	}
}

func TestLoadRevisionPaths(t *testing.T) {
	r, _ := baseRepo(t)
	// After the base: a new directory and a knc.yaml that changes the
	// default namespace (for the working tree only).
	r.Write(map[string]string{
		"knc.yaml":          strings.Replace(baseProject["knc.yaml"], "shop", "store", 1),
		"more/extra.yaml":   services("late"),
		"eventing/new.yaml": services("fresh"),
	})

	t.Run("from a subdirectory, with a new directory", func(t *testing.T) {
		t.Chdir(filepath.Join(r.Dir, "eventing"))
		rep := compare(t, "HEAD", ".", "../more")
		got := linesOf(rep.Objects, func(o diff.ObjectChange) string { return o.Change + " " + o.Title() + " " + o.Pos.File })
		// Every object moves to the new default namespace: removed from
		// shop at the base (read with the base's knc.yaml), added to
		// store. File names read the same at both revisions.
		if len(got) == 0 || !strings.HasPrefix(got[0], "changed Config knc.yaml ") || !strings.HasSuffix(got[0], "knc.yaml") {
			t.Errorf("first change = %q, want the config", got)
		}
		for _, want := range []string{
			"added Service store/late ../more/extra.yaml",
			"added Service store/fresh new.yaml",
			"removed Broker shop/default brokers.yaml",
			"added Broker store/default brokers.yaml",
		} {
			found := false
			for _, g := range got {
				found = found || g == want
			}
			if !found {
				t.Errorf("no change %q in:\n%s", want, strings.Join(got, "\n"))
			}
		}
	})

	t.Run("a file the base lacks", func(t *testing.T) {
		t.Chdir(r.Dir)
		rep := compare(t, "HEAD", "more/extra.yaml")
		got := linesOf(rep.Objects, func(o diff.ObjectChange) string { return o.Change + " " + o.Title() })
		want := []string{"changed Config knc.yaml", "added Service store/late"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("objects (-want +got):\n%s", diff)
		}
	})

	t.Run("outside the repository", func(t *testing.T) {
		t.Chdir(r.Dir)
		outside := t.TempDir()
		_, err := diff.LoadRevision(context.Background(), "HEAD", compiler.Options{Paths: []string{outside}})
		if err == nil || !strings.Contains(err.Error(), "outside the git work tree") {
			t.Errorf("LoadRevision of a path outside the work tree = %v", err)
		}
	})
}
