package project_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/internal/inputfs"
	"github.com/knc-dev/knc/internal/runtimeconfig"
	"github.com/knc-dev/knc/schema"
)

const header = "apiVersion: config.knc.dev/v1alpha1\nkind: Config\n"

// readDiags writes text as knc.yaml and returns what Read says of it, one
// line a diagnostic.
func readDiags(t *testing.T, text string) (*project.Config, []string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "knc.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags, err := project.Read(inputfs.Disk, file)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range diags.Sorted() {
		got = append(got, strings.TrimPrefix(d.String(), filepath.Dir(file)+string(filepath.Separator)))
	}
	return cfg, got
}

// TestReadWordsErrorsFromTheSchema checks that each way knc.yaml can break
// #Config is reported at the value or key concerned, in the words of the
// schema's field.
func TestReadWordsErrorsFromTheSchema(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"kind", "apiVersion: config.knc.dev/v1\nkind: Configuration\n", []string{
			`knc.yaml:1:13: apiVersion: must be "config.knc.dev/v1alpha1", not "config.knc.dev/v1"`,
			`knc.yaml:2:7: kind: must be "Config", not "Configuration"`,
		}},
		{"namespace", header + "defaultNamespace: Team_A\n", []string{
			`knc.yaml:3:19: defaultNamespace: "Team_A" is not a valid namespace`,
		}},
		{"type", header + "defaultNamespace: 3\nruntime: {ttl: \"7\", tracing: {endpoint: host:4317, insecure: yes}}\n", []string{
			`knc.yaml:3:19: defaultNamespace: must be a string, not the integer 3`,
			`knc.yaml:4:16: runtime.ttl: must be an integer, not "7"`,
			`knc.yaml:4:62: runtime.tracing.insecure: must be true or false, not "yes"`,
		}},
		{"features", header + "features:\n  new-trigger-filters: on\n  transport-encryption: always\n", []string{
			`knc.yaml:4:24: features[new-trigger-filters]: must be "enabled" or "disabled", not "on"`,
			`knc.yaml:5:25: features[transport-encryption]: must be "disabled", "permissive" or "strict", not "always"`,
		}},
		{"ping defaults", header + "pingDefaults:\n  data-max-size: -2\n", []string{
			`knc.yaml:4:18: pingDefaults[data-max-size]: -2 is not a size in bytes, or -1 for no bound`,
		}},
		{"unknown feature", header + "features:\n  new-triger-filters: enabled\n", []string{
			`knc.yaml:4:3: features[new-triger-filters]: unknown field "new-triger-filters"; did you mean "new-trigger-filters"?`,
		}},
		{"runtime", header + "runtime:\n  ttl: 300\n  durability: sometimes\n  replicas: 0\n  nats: {url: \"http://nats:4222\"}\n  ui: {recentEvents: 5000}\n", []string{
			`knc.yaml:4:8: runtime.ttl: must be between 1 and 255, not 300`,
			`knc.yaml:5:15: runtime.durability: must be "file" or "fsync", not "sometimes"`,
			`knc.yaml:6:13: runtime.replicas: must be at least 1, not 0`,
			`knc.yaml:7:15: runtime.nats.url: "http://nats:4222" must start with nats:// or tls://`,
			`knc.yaml:8:22: runtime.ui.recentEvents: must be between 0 and 1000, not 5000`,
		}},
		{"unknown", header + "unknown: true\n", []string{
			`knc.yaml:3:1: unknown: unknown field "unknown"; allowed fields are apiVersion, clusterDomain, defaultNamespace, exclude, external, features, kind, pingDefaults, runtime, sources`,
		}},
		{"tracing", header + "runtime:\n  tracing:\n    endpoint: grpc://collector:4317\n    protocol: udp\n    samplingRatio: 1.5\n    headers:\n      bad header: x\n", []string{
			`knc.yaml:5:15: runtime.tracing.endpoint: "grpc://collector:4317" must be an http:// or https:// URL, or HOST:PORT`,
			`knc.yaml:6:15: runtime.tracing.protocol: must be "grpc" or "http", not "udp"`,
			`knc.yaml:7:20: runtime.tracing.samplingRatio: must be between 0 and 1, not 1.5`,
			`knc.yaml:9:19: runtime.tracing.headers[bad header]: "bad header" is not a valid header name`,
		}},
		{"tracing without endpoint", header + "runtime:\n  tracing: {protocol: grpc}\n", []string{
			`knc.yaml:4:12: runtime.tracing.endpoint: is required: the URL of the OTLP receiver, such as http://otel-collector.observability:4318`,
		}},
		{"service monitor", header + "runtime:\n  metrics:\n    serviceMonitor:\n      interval: half a minute\n      labels: {bad key!: x}\n", []string{
			`knc.yaml:6:17: runtime.metrics.serviceMonitor.interval: "half a minute" is not a scrape interval such as 30s or 1m`,
			`knc.yaml:7:26: runtime.metrics.serviceMonitor.labels[bad key!]: "bad key!" is not a valid label key: an optional DNS subdomain prefix and '/', then a name of at most 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit`,
		}},
		{"label value", header + "runtime:\n  metrics:\n    serviceMonitor:\n      labels: {ok: bad value!}\n", []string{
			`knc.yaml:6:20: runtime.metrics.serviceMonitor.labels.ok: "bad value!" is not a valid label value: at most 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit`,
		}},
		{"exclude", header + "exclude: [\"\", \"[\"]\n", []string{
			`knc.yaml:3:11: exclude[0]: must not be empty`,
		}},
		{"exclude pattern", header + "exclude: [\"[\"]\n", []string{
			`knc.yaml:3:11: exclude[0]: "[" is not a valid pattern: syntax error in pattern`,
		}},
		{"external", header + "external:\n- {apiVersion: \"\", kind: Service, name: Bad, url: nope}\n", []string{
			`knc.yaml:4:16: external[0].apiVersion: must not be empty`,
			`knc.yaml:4:41: external[0].name: "Bad" is not a valid name`,
			`knc.yaml:4:51: external[0].url: "nope" must be an absolute URL`,
		}},
	}
	tests = append(tests, struct {
		name, text string
		want       []string
	}{"all at once", header + `defaultNamespace: Team_A
clusterDomain: cluster.local
features:
  new-trigger-filters: on
  delivery-timeout: maybe
runtime:
  ttl: 300
  durability: sometimes
  replicas: 0
  nats: {url: "http://nats:4222"}
  ui: {recentEvents: 5000}
unknown: true
`, []string{
		`knc.yaml:3:19: defaultNamespace: "Team_A" is not a valid namespace`,
		`knc.yaml:6:24: features[new-trigger-filters]: must be "enabled" or "disabled", not "on"`,
		`knc.yaml:7:21: features[delivery-timeout]: must be "enabled" or "disabled", not "maybe"`,
		`knc.yaml:9:8: runtime.ttl: must be between 1 and 255, not 300`,
		`knc.yaml:10:15: runtime.durability: must be "file" or "fsync", not "sometimes"`,
		`knc.yaml:11:13: runtime.replicas: must be at least 1, not 0`,
		`knc.yaml:12:15: runtime.nats.url: "http://nats:4222" must start with nats:// or tls://`,
		`knc.yaml:13:22: runtime.ui.recentEvents: must be between 0 and 1000, not 5000`,
		`knc.yaml:14:1: unknown: unknown field "unknown"; allowed fields are apiVersion, clusterDomain, defaultNamespace, exclude, external, features, kind, pingDefaults, runtime, sources`,
	}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := readDiags(t, tt.text)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTypesHoldEverySchemaField walks #Config and the Go types Read
// decodes it into together: a field added to the schema that no Go field
// receives would be dropped without a word.
func TestTypesHoldEverySchemaField(t *testing.T) {
	ctx := cuecontext.New()
	v, err := schema.Compile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(path string, def cue.Value, typ reflect.Type)
	walk = func(path string, def cue.Value, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Kind() == reflect.Map {
			return
		}
		if def.IncompleteKind()&cue.ListKind != 0 {
			def = def.LookupPath(cue.MakePath(cue.AnyIndex))
		}
		if def.IncompleteKind() != cue.StructKind {
			return
		}
		fields := map[string]reflect.StructField{}
		for _, f := range reflect.VisibleFields(typ) {
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				fields[name] = f
			}
		}
		for it, _ := def.Fields(cue.Optional(true)); it.Next(); {
			name := it.Selector().Unquoted()
			f, ok := fields[name]
			if !ok {
				t.Errorf("%s%s of #Config has no field in %s", path, name, typ)
				continue
			}
			walk(path+name+".", it.Value(), f.Type)
		}
	}
	walk("", v.LookupPath(cue.ParsePath("#Config")), reflect.TypeFor[project.Config]())
}

// TestDefaultIsTheSchemas checks that a project without knc.yaml gets the
// defaults #Config gives, features included.
func TestDefaultIsTheSchemas(t *testing.T) {
	cfg := project.Default()
	if cfg.DefaultNamespace != "default" || cfg.ClusterDomain != "cluster.local" {
		t.Errorf("namespace %q, domain %q; want default and cluster.local", cfg.DefaultNamespace, cfg.ClusterDomain)
	}
	want := model.Features{
		model.FeatureNewTriggerFilters: true, model.FeatureDeliveryTimeout: true,
		model.FeatureDeliveryRetryAfter: false, model.FeatureCrossNamespaceEventLinks: false, model.FeatureKReferenceGroup: false,
		model.FeatureNewAPIServerSourceFilters: false,
	}
	if diff := cmp.Diff(want, cfg.EnabledFeatures()); diff != "" {
		t.Errorf("features (-want +got):\n%s", diff)
	}
	if got := cfg.Features["default-authorization-mode"]; got != "allow-same-namespace" {
		t.Errorf("default-authorization-mode = %q, want Knative's allow-same-namespace", got)
	}
	read, diags := readDiags(t, header)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	read.File = ""
	if diff := cmp.Diff(cfg, read); diff != "" {
		t.Errorf("a knc.yaml that sets nothing reads as (-default +read):\n%s", diff)
	}
}

// workloadFields of knc.yaml's runtime shape the objects knc build renders
// (image, resources, volume, replicas, monitoring) rather than set a flag
// of knc runtime; every other field of #RuntimeConfig must be the source
// of a runtime setting.
var workloadFields = []string{
	"runtime.image", "runtime.memory.limit", "runtime.memory.request",
	"runtime.metrics.serviceMonitor.enabled", "runtime.metrics.serviceMonitor.interval", "runtime.metrics.serviceMonitor.labels",
}

// TestRuntimeFieldsReachTheRuntime checks that each field of knc.yaml that
// internal/runtimeconfig names exists in #Config, and that each field of
// #Config's runtime is a runtime setting's source or shapes the workload:
// a field added to the schema without either fails here, and
// internal/runtimeconfig's own test then asks its setting for a flag and a
// ConfigMap key.
func TestRuntimeFieldsReachTheRuntime(t *testing.T) {
	ctx := cuecontext.New()
	v, err := schema.Compile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	def := v.LookupPath(cue.ParsePath("#Config"))
	sources := map[string]bool{}
	for _, f := range runtimeconfig.Fields {
		if f.KncYAML == "" {
			continue
		}
		sources[f.KncYAML] = true
		field := def
		for _, name := range strings.Split(f.KncYAML, ".") {
			next := field.LookupPath(cue.MakePath(cue.Str(name).Optional()))
			if !next.Exists() {
				next = field.LookupPath(cue.MakePath(cue.Str(name)))
			}
			field = next
		}
		if !field.Exists() {
			t.Errorf("--%s comes from knc.yaml's %s, which #Config does not have", f.Flag, f.KncYAML)
		}
	}
	for _, w := range workloadFields {
		sources[w] = true
	}
	var walk func(path string, v cue.Value)
	walk = func(path string, v cue.Value) {
		if sources[path] {
			return
		}
		if v.IncompleteKind() != cue.StructKind || v.LookupPath(cue.MakePath(cue.AnyString)).Exists() {
			t.Errorf("knc.yaml's %s reaches no setting of the runtime: name it as the KncYAML of a field of internal/runtimeconfig, or list it among the workload's fields", path)
			return
		}
		for it, _ := v.Fields(cue.Optional(true)); it.Next(); {
			walk(path+"."+it.Selector().Unquoted(), it.Value())
		}
	}
	walk("runtime", def.LookupPath(cue.MakePath(cue.Str("runtime").Optional())))
}

// TestFeatureDocsAreTheSchemas holds the table of docs/validation.md to
// #Features: every flag, with its default.
func TestFeatureDocsAreTheSchemas(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "validation.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		documented[strings.Trim(strings.TrimSpace(cells[1]), "`")] = strings.TrimSpace(cells[2])
	}
	defaults := project.Default().Features
	for name, def := range defaults {
		if got, ok := documented[name]; !ok || got != def {
			t.Errorf("docs/validation.md gives feature %s the default %q, want the schema's %q", name, got, def)
		}
	}
	if len(defaults) < 11 {
		t.Errorf("the schema has %d features, want Knative's 10 eventing flags and new-trigger-filters", len(defaults))
	}
}

// BenchmarkRead reads a knc.yaml that sets most fields, the schema being
// compiled once beforehand.
func BenchmarkRead(b *testing.B) {
	file := filepath.Join(b.TempDir(), "knc.yaml")
	text := header + `defaultNamespace: shop
exclude: [generated]
features: {delivery-retryafter: enabled, transport-encryption: strict}
external: [{apiVersion: v1, kind: Service, name: billing}]
runtime:
  ttl: 7
  durability: fsync
  tracing: {endpoint: "http://collector:4318", headers: {x-team: shop}}
  metrics: {serviceMonitor: {enabled: true, interval: 30s, labels: {release: prom}}}
`
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	project.Default()
	for b.Loop() {
		if _, diags, err := project.Read(inputfs.Disk, file); err != nil || len(diags) > 0 {
			b.Fatal(err, diags)
		}
	}
}
