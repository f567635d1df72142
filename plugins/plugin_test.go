package plugins_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/compiler/routes"
	"github.com/knc-dev/knc/internal/cuelimit"
	"github.com/knc-dev/knc/internal/inputfs"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/plugins"
)

// TestKncClaimsWhatTheRoutesServe checks that knc's plugin renders a
// runtime for exactly the Brokers and Channels the routing table serves.
func TestKncClaimsWhatTheRoutesServe(t *testing.T) {
	reg := plugins.NewRegistry(plugins.KncOptions{Image: "img"})
	for _, class := range []string{"knc", "MTChannelBasedBroker", "Kafka", "", "KNC"} {
		b := &model.Broker{Metadata: model.ObjectMeta{Annotations: map[string]string{model.BrokerClassAnnotation: class}}}
		p := reg.ForBroker(class)
		if got, want := p != nil && p.Name() == "knc", routes.ServesBroker(b); got != want {
			t.Errorf("class %q: knc plugin %v, routes serve %v", class, got, want)
		}
	}
	for _, k := range []plugins.ChannelKind{
		{APIVersion: model.ChannelAPIVersionKnc, Kind: model.ChannelKindKnc},
		{APIVersion: "messaging.knative.dev/v1", Kind: "InMemoryChannel"},
		{APIVersion: "messaging.knative.dev/v1beta1", Kind: "KafkaChannel"},
		{APIVersion: "messaging.knative.dev/v1beta1", Kind: "InMemoryChannel"},
	} {
		c := &model.Channel{Spec: model.ChannelSpec{ChannelTemplate: &model.ChannelTemplateSpec{APIVersion: k.APIVersion, Kind: k.Kind}}}
		p := reg.ForChannel(k)
		if got, want := p != nil && p.Name() == "knc", routes.ServesChannel(c); got != want {
			t.Errorf("channel %s: knc plugin %v, routes serve %v", k, got, want)
		}
	}
}

type fakePlugin struct {
	name   string
	claims plugins.Claims
}

func (f fakePlugin) Name() string                                      { return f.name }
func (f fakePlugin) Claims() plugins.Claims                            { return f.claims }
func (f fakePlugin) Render(*plugins.Request) ([]plugins.Object, error) { return nil, nil }

func TestRegisterRefusesDoubleClaims(t *testing.T) {
	reg := plugins.NewRegistry(plugins.KncOptions{})
	tests := []struct {
		plugin fakePlugin
		want   string
	}{
		{fakePlugin{"other", plugins.Claims{BrokerClasses: []string{"knc"}}}, `plugin other claims Broker class "knc", already claimed by plugin knc`},
		{fakePlugin{"other", plugins.Claims{ChannelKinds: []plugins.ChannelKind{{APIVersion: "messaging.knative.dev/v1", Kind: "InMemoryChannel"}}}}, "plugin other claims Channel kind messaging.knative.dev/v1 InMemoryChannel, already claimed by plugin knc"},
		{fakePlugin{"knc", plugins.Claims{BrokerClasses: []string{"x"}}}, "two plugins are named knc"},
	}
	for _, tt := range tests {
		err := reg.Register(tt.plugin)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Register(%v) = %v, want %q", tt.plugin, err, tt.want)
		}
	}
	if err := reg.Register(fakePlugin{"mine", plugins.Claims{BrokerClasses: []string{"x"}}}); err != nil {
		t.Fatal(err)
	}
	if p := reg.ForBroker("x"); p == nil || p.Name() != "mine" {
		t.Errorf("ForBroker(x) = %v", p)
	}
}

func writePlugin(t *testing.T, root, name, src string) {
	t.Helper()
	dir := filepath.Join(root, plugins.Dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadCUEReportsBrokenPlugins(t *testing.T) {
	tests := []struct {
		name, src string
		want      string
	}{
		{"neither", "package p\nrender: output: []\n", "plugin neither declares neither class (a Broker class) nor channel (a channel template's apiVersion and kind)"},
		{"both", "package p\nclass: \"a\"\nchannel: {apiVersion: \"x/v1\", kind: \"K\"}\nrender: output: []\n", "plugin both declares both class and channel; a plugin renders either Brokers or Channels"},
		{"nooutput", "package p\nclass: \"a\"\n", "render.output: plugin nooutput has no render.output: the list of objects it renders"},
		{"badclass", "package p\nclass: 3\nrender: output: []\n", "class: must be a non-empty string: the Broker class the plugin renders"},
		{"syntax", "package p\nclass: \n", "expected operand, found 'EOF'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writePlugin(t, root, tt.name, tt.src)
			ps, diags, err := plugins.LoadCUE(inputfs.Disk, root, cuelimit.Default)
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != 0 {
				t.Errorf("loaded %d plugins", len(ps))
			}
			if len(diags) != 1 || !strings.Contains(diags[0].String(), tt.want) {
				t.Errorf("diagnostics %v, want one saying %q", diags, tt.want)
			}
		})
	}
}

func TestLoadCUEWithoutPlugins(t *testing.T) {
	ps, diags, err := plugins.LoadCUE(inputfs.Disk, t.TempDir(), cuelimit.Default)
	if err != nil || len(ps) != 0 || len(diags) != 0 {
		t.Errorf("LoadCUE = %v, %v, %v; want nothing", ps, diags, err)
	}
}

func TestCUEChannelPlugin(t *testing.T) {
	root := t.TempDir()
	writePlugin(t, root, "hooks", `package hooks
channel: {apiVersion: "example.dev/v1", kind: "Hook"}
render: {
	input: {namespace: string, channel: {metadata: name: string, ...}}
	output: [
		{apiVersion: "v1", kind: "ConfigMap", metadata: name: input.channel.metadata.name},
		{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "shared", namespace: "elsewhere"}},
	]
}
`)
	ps, diags, err := plugins.LoadCUE(inputfs.Disk, root, cuelimit.Default)
	if err != nil || len(diags) > 0 {
		t.Fatal(err, diags)
	}
	if diff := cmp.Diff(plugins.Claims{ChannelKinds: []plugins.ChannelKind{{APIVersion: "example.dev/v1", Kind: "Hook"}}}, ps[0].Claims()); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	channel := func(name string) plugins.Claimed {
		return plugins.Claimed{Object: plugins.Object{"kind": "Channel", "metadata": map[string]any{"name": name, "namespace": "ns"}}}
	}
	objs, err := ps[0].Render(&plugins.Request{Namespace: "ns", Channels: []plugins.Claimed{channel("a"), channel("b")}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		md := o["metadata"].(map[string]any)
		got = append(got, md["namespace"].(string)+"/"+md["name"].(string))
	}
	want := []string{"ns/a", "elsewhere/shared", "ns/b", "elsewhere/shared"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}

func TestCUEPluginOutputMustBeObjects(t *testing.T) {
	root := t.TempDir()
	writePlugin(t, root, "bad", `package bad
class: "x"
render: output: [{kind: "ConfigMap"}, {apiVersion: "v1", kind: "ConfigMap", metadata: {}}]
`)
	ps, diags, err := plugins.LoadCUE(inputfs.Disk, root, cuelimit.Default)
	if err != nil || len(diags) > 0 {
		t.Fatal(err, diags)
	}
	_, err = ps[0].Render(&plugins.Request{Namespace: "ns", Brokers: []plugins.Claimed{{Object: plugins.Object{"kind": "Broker", "metadata": map[string]any{"name": "b"}}}}})
	var msgs []string
	for _, line := range strings.Split(err.Error(), "\n") {
		_, msg, _ := strings.Cut(line, ": ")
		msgs = append(msgs, msg)
	}
	want := []string{
		"render.output[0]: plugin bad rendering Broker ns/b: not a Kubernetes object: apiVersion and kind are required",
		"render.output[1].metadata.name: plugin bad rendering Broker ns/b: every object needs a name",
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// TestKncRuntimeNeedsRoutes checks that a namespace whose table is empty
// gets no runtime.
func TestKncRuntimeNeedsRoutes(t *testing.T) {
	p := plugins.NewKnc(plugins.KncOptions{Image: "img"})
	objs, err := p.Render(&plugins.Request{Namespace: "ns", Table: &routing.Table{}, Config: project.Default()})
	if err != nil || len(objs) != 0 {
		t.Errorf("Render = %d objects, %v; want none", len(objs), err)
	}
}

// bigTable is a namespace's table with n Triggers.
func bigTable(n int) *routing.Table {
	b := routing.Broker{Source: routing.Source{Namespace: "ns", Name: "b"}, Path: "/brokers/ns/b"}
	for i := range n {
		b.Triggers = append(b.Triggers, routing.Trigger{
			Source:     routing.Source{Namespace: "ns", Name: fmt.Sprintf("trigger-with-a-rather-long-name-%06d", i), SpecHash: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
			Attributes: map[string]string{"type": "com.example.some.event.type"},
			Subscriber: routing.Destination{URI: fmt.Sprintf("http://subscriber-%d.ns.svc.cluster.local/events", i)},
		})
	}
	return &routing.Table{APIVersion: routing.APIVersion, Kind: routing.Kind, Brokers: []routing.Broker{b}}
}

// TestLargeTablesFitAConfigMap checks that a table too large for a
// ConfigMap when indented is written compactly, and that one too large
// either way is an error rather than an object the API server refuses.
func TestLargeTablesFitAConfigMap(t *testing.T) {
	p := plugins.NewKnc(plugins.KncOptions{Image: "img"})
	tableOf := func(objs []plugins.Object) string {
		for _, o := range objs {
			if data, ok := o["data"].(map[string]any); ok {
				if s, ok := data["table.json"].(string); ok {
					return s
				}
			}
		}
		t.Fatal("no routing table")
		return ""
	}
	indented, err := routing.Encode(bigTable(3000))
	if err != nil {
		t.Fatal(err)
	}
	if len(indented) <= plugins.MaxTableBytes {
		t.Fatalf("the test table takes %d bytes indented; make it larger", len(indented))
	}
	objs, err := p.Render(&plugins.Request{Namespace: "ns", Table: bigTable(3000), Config: project.Default()})
	if err != nil {
		t.Fatal(err)
	}
	got := tableOf(objs)
	if len(got) > plugins.MaxTableBytes || strings.Count(got, "\n") != 1 {
		t.Errorf("table of %d bytes and %d lines, want a compact one within %d", len(got), strings.Count(got, "\n"), plugins.MaxTableBytes)
	}
	if _, err := routing.Decode([]byte(got)); err != nil {
		t.Errorf("the compact table does not decode: %v", err)
	}

	// A table too large for one ConfigMap is split across several, all
	// mounted in the runtime's table directory, that merge back into it.
	big := bigTable(8000)
	objs, err = p.Render(&plugins.Request{Namespace: "ns", Table: big, Config: project.Default()})
	if err != nil {
		t.Fatal(err)
	}
	var parts []*routing.Table
	var names []string
	for _, o := range objs {
		data, ok := o["data"].(map[string]any)
		if !ok {
			continue
		}
		for key, v := range data {
			if !strings.HasPrefix(key, "routing-table-") {
				continue
			}
			s := v.(string)
			if len(s) > plugins.MaxTableBytes {
				t.Errorf("%s takes %d bytes, more than %d", key, len(s), plugins.MaxTableBytes)
			}
			part, err := routing.Decode([]byte(s))
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			parts = append(parts, part)
			names = append(names, o["metadata"].(map[string]any)["name"].(string))
		}
	}
	if len(parts) < 2 {
		t.Fatalf("%d parts, want the table split", len(parts))
	}
	merged, err := routing.Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	big.APIVersion, big.Kind = routing.APIVersion, routing.Kind
	if diff := cmp.Diff(big, merged); diff != "" {
		t.Errorf("merged parts (-table +merged):\n%s", diff)
	}
	var pod map[string]any
	for _, o := range objs {
		if o["kind"] == "Deployment" {
			pod = o["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		}
	}
	if pod == nil {
		t.Fatal("no Deployment")
	}
	var projected []string
	for _, v := range pod["volumes"].([]any) {
		vol := v.(map[string]any)
		if vol["name"] != "routing" {
			continue
		}
		for _, src := range vol["projected"].(map[string]any)["sources"].([]any) {
			projected = append(projected, src.(map[string]any)["configMap"].(map[string]any)["name"].(string))
		}
	}
	slices.Sort(names)
	slices.Sort(projected)
	if diff := cmp.Diff(names, projected); diff != "" {
		t.Errorf("ConfigMaps mounted (-made +mounted):\n%s", diff)
	}
	args := fmt.Sprint(pod["containers"].([]any)[0].(map[string]any)["args"])
	if !strings.Contains(args, "--table "+plugins.TableDir+" ") {
		t.Errorf("runtime args %s, want --table %s", args, plugins.TableDir)
	}
}

// TestEncodeTableMatchesRoutingEncode checks the fast indentation against
// the canonical encoding, on a table with every kind of value.
func TestEncodeTableMatchesRoutingEncode(t *testing.T) {
	cesql := "type = 'a' AND subject LIKE '%<&>\"\\\\%'"
	table := bigTable(3)
	table.Brokers[0].Delivery = &routing.Delivery{Retry: 2, BackoffDelay: routing.Duration(200_000_000), DeadLetterSink: &routing.Destination{Ref: &routing.Ref{APIVersion: "v1", Kind: "Service", Namespace: "ns", Name: "dls"}}}
	table.Brokers[0].Triggers[0].Filters = []routing.Filter{{CESQL: cesql}, {All: []routing.Filter{{Exact: map[string]string{"type": "x{y}[z],:"}}}}, {Any: []routing.Filter{}}}
	table.Channels = []routing.Channel{{Source: routing.Source{Namespace: "ns", Name: "c"}, Path: "/channels/ns/c", Subscriptions: []routing.Subscription{{Source: routing.Source{Namespace: "ns", Name: "s"}, Reply: &routing.Destination{URI: "http://x/ünïcode"}}}}}
	table.Sequences = []routing.Sequence{{Source: routing.Source{Namespace: "ns", Name: "seq"}, Channels: []string{"seq-kn-sequence-0"}, Subscriptions: []string{"seq-kn-sequence-0"}}}
	table.Parallels = []routing.Parallel{{Source: routing.Source{Namespace: "ns", Name: "par"}, Channel: "par-kn-parallel", Branches: []routing.Branch{{Channel: "par-kn-parallel-0", FilterSubscription: "par-kn-parallel-filter-0", Subscription: "par-kn-parallel-0"}}}}
	table.PingSources = []routing.PingSource{{Source: routing.Source{Namespace: "ns", Name: "p"}, Schedule: "*/1 * * * *", Data: `{"a":"<b>"}`,
		Extensions: map[string]string{"team": "x"}, Sink: routing.Destination{URI: "http://knc-ingress.ns.svc/brokers/ns/b"}, SinkPath: "/brokers/ns/b"}}
	for _, tt := range []*routing.Table{table, {}} {
		want, err := routing.Encode(tt)
		if err != nil {
			t.Fatal(err)
		}
		got, err := plugins.EncodeTable(tt)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("EncodeTable differs from routing.Encode (-want +got):\n%s", diff)
		}
	}
}

// TestTableEncoderWritesEveryList fails when routing.Table gains a list
// the encoder does not write: each list holds one entry, and the encoding
// must equal the canonical one.
func TestTableEncoderWritesEveryList(t *testing.T) {
	table := &routing.Table{}
	v := reflect.ValueOf(table).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Slice {
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		}
	}
	want, err := routing.Encode(table)
	if err != nil {
		t.Fatal(err)
	}
	got, err := plugins.EncodeTable(table)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("EncodeTable leaves out part of the table (-want +got):\n%s", diff)
	}
}

// TestTableEncoderNamespaces checks that each namespace's table, assembled
// from the entries encoded once, equals the canonical encoding of that
// namespace's table.
func TestTableEncoderNamespaces(t *testing.T) {
	full := &routing.Table{}
	for _, ns := range []string{"a", "b", "c"} {
		for i := range 2 {
			name := fmt.Sprintf("x%d", i)
			full.Brokers = append(full.Brokers, routing.Broker{Source: routing.Source{Namespace: ns, Name: name}, Path: "/brokers/" + ns + "/" + name})
		}
		if ns != "b" {
			full.Channels = append(full.Channels, routing.Channel{Source: routing.Source{Namespace: ns, Name: "c"}, Path: "/channels/" + ns + "/c"})
		}
		if ns != "a" {
			full.Sequences = append(full.Sequences, routing.Sequence{Source: routing.Source{Namespace: ns, Name: "s"}, Channels: []string{"s-kn-sequence-0"}, Subscriptions: []string{"s-kn-sequence-0"}})
			full.Parallels = append(full.Parallels, routing.Parallel{Source: routing.Source{Namespace: ns, Name: "p"}, Channel: "p-kn-parallel"})
		}
	}
	// A PingSource is fired by the runtime of its sink's namespace when
	// its sink is a Broker or Channel of the table, else by its own.
	full.PingSources = []routing.PingSource{
		{Source: routing.Source{Namespace: "a", Name: "into-c"}, SinkPath: "/brokers/c/x0"},
		{Source: routing.Source{Namespace: "b", Name: "to-a-uri"}, Sink: routing.Destination{URI: "http://example.com/"}},
	}
	firedIn := map[string]string{"into-c": "c", "to-a-uri": "b"}
	// Any other source is carried by the table of its sink's namespace
	// likewise, whose page draws it.
	full.Sources = []routing.EventSource{
		{Source: routing.Source{Namespace: "c", Name: "watch"}, APIVersion: "sources.knative.dev/v1", Kind: "ApiServerSource", SinkPath: "/channels/a/c"},
		{Source: routing.Source{Namespace: "b", Name: "run"}, APIVersion: "sources.knative.dev/v1", Kind: "ContainerSource", Sink: routing.Destination{URI: "http://example.com/"}},
	}
	shownIn := map[string]string{"watch": "a", "run": "b"}
	enc, err := plugins.NewTableEncoder(full)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"a", "b", "c", "none"} {
		sub := &routing.Table{}
		for _, b := range full.Brokers {
			if b.Namespace == ns {
				sub.Brokers = append(sub.Brokers, b)
			}
		}
		for _, c := range full.Channels {
			if c.Namespace == ns {
				sub.Channels = append(sub.Channels, c)
			}
		}
		for _, p := range full.PingSources {
			if firedIn[p.Name] == ns {
				sub.PingSources = append(sub.PingSources, p)
			}
		}
		for _, s := range full.Sources {
			if shownIn[s.Name] == ns {
				sub.Sources = append(sub.Sources, s)
			}
		}
		for _, s := range full.Sequences {
			if s.Namespace == ns {
				sub.Sequences = append(sub.Sequences, s)
			}
		}
		for _, p := range full.Parallels {
			if p.Namespace == ns {
				sub.Parallels = append(sub.Parallels, p)
			}
		}
		want, err := routing.Encode(sub)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(enc.Namespace(ns))); diff != "" {
			t.Errorf("namespace %s (-want +got):\n%s", ns, diff)
		}
		// The table the build hands the namespace's backend is the same.
		part, err := routing.Encode(full.ForNamespace(ns))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(part)); diff != "" {
			t.Errorf("ForNamespace(%s) (-want +got):\n%s", ns, diff)
		}
	}
}
