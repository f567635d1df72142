package render_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/render"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/plugins"
)

// writeTree writes files (slash paths) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// build loads dir as knc build does and renders it.
func build(t *testing.T, dir string, paths ...string) (*render.Output, diag.List) {
	t.Helper()
	res, err := compiler.Load(compiler.Options{Dir: dir, Paths: paths})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid() {
		return nil, res.Diagnostics
	}
	root := dir
	if res.Config.File != "" {
		root = filepath.Dir(res.Config.File)
	}
	out, diags, err := render.Render(res.Set, res.Config, render.Options{Backends: plugins.Backends, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	return out, diags.Relative(dir)
}

func mustBuild(t *testing.T, files map[string]string) *render.Output {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	out, diags := build(t, dir)
	if len(diags) > 0 {
		t.Fatalf("unexpected diagnostics:\n%v", diags)
	}
	return out
}

func file(t *testing.T, out *render.Output, path string) []byte {
	t.Helper()
	for _, f := range out.Files {
		if f.Path == path {
			return f.Data
		}
	}
	t.Fatalf("no file %s in the output; have %v", path, paths(out))
	return nil
}

func paths(out *render.Output) []string {
	var p []string
	for _, f := range out.Files {
		p = append(p, f.Path)
	}
	return p
}

// objects decodes the objects of a multi-document file.
func objects(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, doc := range strings.Split(string(data), "\n---\n") {
		doc = strings.TrimPrefix(doc, "---\n")
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("invalid YAML: %v\n%s", err, doc)
		}
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

func byKind(objs []map[string]any, kind string) []map[string]any {
	var out []map[string]any
	for _, o := range objs {
		if o["kind"] == kind {
			out = append(out, o)
		}
	}
	return out
}

func name(o map[string]any) string {
	return o["metadata"].(map[string]any)["name"].(string)
}

const config = `apiVersion: config.knc.dev/v1alpha1
kind: Config
defaultNamespace: ns1
`

const project = `
apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: default}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: t1}
spec:
  broker: default
  subscriber: {ref: {apiVersion: v1, kind: Service, name: sink}}
---
apiVersion: v1
kind: Service
metadata: {name: sink}
spec: {ports: [{port: 80}]}
---
apiVersion: messaging.knative.dev/v1
kind: Channel
metadata: {name: ch, namespace: ns2}
---
apiVersion: messaging.knative.dev/v1
kind: Subscription
metadata: {name: s1, namespace: ns2}
spec:
  channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: ch}
  subscriber: {uri: "http://example.com/"}
`

func TestLayout(t *testing.T) {
	out := mustBuild(t, map[string]string{"knc.yaml": config, "m.yaml": project})
	want := []string{
		"cluster/admission.yaml", "cluster/kustomization.yaml", "cluster/runtime.yaml",
		"crds/brokers.eventing.knative.dev.yaml", "crds/channels.messaging.knative.dev.yaml", "crds/kustomization.yaml",
		"crds/parallels.flows.knative.dev.yaml", "crds/pingsources.sources.knative.dev.yaml", "crds/sequences.flows.knative.dev.yaml", "crds/subscriptions.messaging.knative.dev.yaml", "crds/triggers.eventing.knative.dev.yaml",
		"kustomization.yaml",
		"namespaces/ns1/brokers.yaml", "namespaces/ns1/kustomization.yaml", "namespaces/ns1/resources.yaml", "namespaces/ns1/runtime.yaml", "namespaces/ns1/triggers.yaml",
		"namespaces/ns2/channels.yaml", "namespaces/ns2/kustomization.yaml", "namespaces/ns2/runtime.yaml", "namespaces/ns2/subscriptions.yaml",
		"routing-table.json",
	}
	if diff := cmp.Diff(want, paths(out)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	var root struct{ Resources []string }
	if err := yaml.Unmarshal(file(t, out, "kustomization.yaml"), &root); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"crds", "cluster", "namespaces/ns1", "namespaces/ns2"}, root.Resources); diff != "" {
		t.Errorf("root kustomization (-want +got):\n%s", diff)
	}
}

// TestKnativeObjectsNormalised checks the MUSTs of the control-plane
// contract on creation: a Broker carries its class, a Channel its
// channelTemplate, and every object the hash of its spec, equal to the
// routing table's. spec.config is left to the CRD's default ({}): Knative's
// webhook refuses an empty one in a manifest, and so does knc validate.
func TestKnativeObjectsNormalised(t *testing.T) {
	out := mustBuild(t, map[string]string{"knc.yaml": config, "m.yaml": project + `
---
apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: mt, annotations: {eventing.knative.dev/broker.class: MTChannelBasedBroker}}
status:
  conditions: [{type: Ready, status: "True"}]
`})
	brokers := objects(t, file(t, out, "namespaces/ns1/brokers.yaml"))
	got := map[string]any{}
	for _, b := range brokers {
		md := b["metadata"].(map[string]any)
		got[name(b)] = map[string]any{"annotations": md["annotations"], "spec": b["spec"], "status": b["status"]}
	}
	table, err := routing.Decode(file(t, out, "routing-table.json"))
	if err != nil {
		t.Fatal(err)
	}
	hash := table.Brokers[0].SpecHash
	want := map[string]any{
		"default": map[string]any{
			"annotations": map[string]any{"eventing.knative.dev/broker.class": "knc", "knc.dev/spec-hash": hash},
			"spec":        map[string]any{},
			"status":      nil,
		},
		// A class knc does not run keeps its spec as written too.
		"mt": map[string]any{
			"annotations": map[string]any{"eventing.knative.dev/broker.class": "MTChannelBasedBroker", "knc.dev/spec-hash": brokers[1]["metadata"].(map[string]any)["annotations"].(map[string]any)["knc.dev/spec-hash"]},
			"spec":        map[string]any{},
			"status":      nil,
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("brokers (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(hash, "sha256:") {
		t.Errorf("routing table spec hash %q", hash)
	}
	triggers := objects(t, file(t, out, "namespaces/ns1/triggers.yaml"))
	if h := triggers[0]["metadata"].(map[string]any)["annotations"].(map[string]any)["knc.dev/spec-hash"]; h != table.Brokers[0].Triggers[0].SpecHash {
		t.Errorf("trigger spec hash %v, routing table has %v", h, table.Brokers[0].Triggers[0].SpecHash)
	}
	channels := objects(t, file(t, out, "namespaces/ns2/channels.yaml"))
	wantTemplate := map[string]any{"apiVersion": "messaging.knc.dev/v1alpha1", "kind": "JetStreamChannel"}
	if diff := cmp.Diff(wantTemplate, channels[0]["spec"].(map[string]any)["channelTemplate"]); diff != "" {
		t.Errorf("channel template (-want +got):\n%s", diff)
	}
}

// TestRuntimePerNamespace checks that each namespace's runtime gets the
// routes of its own Brokers and Channels only, in a ConfigMap named by the
// hash of its content that the Deployment mounts.
func TestRuntimePerNamespace(t *testing.T) {
	out := mustBuild(t, map[string]string{"knc.yaml": config, "m.yaml": project})
	for ns, want := range map[string][2][]string{
		"ns1": {{"ns1/default"}, nil},
		"ns2": {nil, {"ns2/ch"}},
	} {
		objs := objects(t, file(t, out, "namespaces/"+ns+"/runtime.yaml"))
		var cm map[string]any
		for _, c := range byKind(objs, "ConfigMap") {
			if strings.HasPrefix(name(c), "knc-routes-") {
				cm = c
			}
		}
		if cm == nil {
			t.Fatalf("%s: no routes ConfigMap", ns)
		}
		data := cm["data"].(map[string]any)["table.json"].(string)
		table, err := routing.Decode([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		var brokers, channels []string
		for _, b := range table.Brokers {
			brokers = append(brokers, b.Key())
		}
		for _, c := range table.Channels {
			channels = append(channels, c.Key())
		}
		if diff := cmp.Diff(want, [2][]string{brokers, channels}); diff != "" {
			t.Errorf("%s: table (-want +got):\n%s", ns, diff)
		}
		deployments := byKind(objs, "Deployment")
		if len(deployments) != 1 {
			t.Fatalf("%s: %d Deployments", ns, len(deployments))
		}
		b, _ := yaml.Marshal(deployments[0])
		if !bytes.Contains(b, []byte("name: "+name(cm))) {
			t.Errorf("%s: the Deployment does not mount %s:\n%s", ns, name(cm), b)
		}
		var services []string
		for _, svc := range byKind(objs, "Service") {
			services = append(services, name(svc))
		}
		if diff := cmp.Diff([]string{"knc-ingress", "knc-runtime-metrics"}, services); diff != "" {
			t.Errorf("%s: services (-want +got):\n%s", ns, diff)
		}
	}
}

// TestRoutesChangeRollsTheDeployment checks that a change to the routes
// changes the ConfigMap's name, and so the Deployment's pod template.
func TestRoutesChangeRollsTheDeployment(t *testing.T) {
	before := mustBuild(t, map[string]string{"knc.yaml": config, "m.yaml": project})
	after := mustBuild(t, map[string]string{"knc.yaml": config, "m.yaml": strings.Replace(project, "name: t1", "name: t2", 1)})
	dep := func(out *render.Output) string {
		b, _ := yaml.Marshal(byKind(objects(t, file(t, out, "namespaces/ns1/runtime.yaml")), "Deployment")[0]["spec"])
		return string(b)
	}
	if dep(before) == dep(after) {
		t.Error("the Deployment's spec did not change with the routes")
	}
	unchanged := func(out *render.Output) string {
		b, _ := yaml.Marshal(byKind(objects(t, file(t, out, "namespaces/ns2/runtime.yaml")), "Deployment")[0]["spec"])
		return string(b)
	}
	if unchanged(before) != unchanged(after) {
		t.Error("a change in ns1 rolled the runtime of ns2")
	}
}

func TestPassThrough(t *testing.T) {
	out := mustBuild(t, map[string]string{"knc.yaml": config + "external:\n- {apiVersion: v1, kind: ConfigMap, name: kafka-broker-config, namespace: knative-eventing}\n", "m.yaml": `
apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: kafka, annotations: {eventing.knative.dev/broker.class: Kafka}}
spec:
  config: {apiVersion: v1, kind: ConfigMap, name: kafka-broker-config, namespace: knative-eventing}
---
apiVersion: messaging.knative.dev/v1
kind: Channel
metadata: {name: kc}
spec:
  channelTemplate: {apiVersion: messaging.knative.dev/v1beta1, kind: KafkaChannel, spec: {numPartitions: 3}}
---
apiVersion: messaging.knative.dev/v1
kind: Channel
metadata: {name: imc, namespace: ns3}
spec:
  channelTemplate: {apiVersion: messaging.knative.dev/v1, kind: InMemoryChannel}
`})
	got := paths(out)
	if slices.Contains(got, "namespaces/ns1/runtime.yaml") {
		t.Error("knc renders a runtime for a namespace with only classes it does not run")
	}
	if !slices.Contains(got, "namespaces/ns3/runtime.yaml") {
		t.Error("knc renders no runtime for an InMemoryChannel, which it runs")
	}
	channels := objects(t, file(t, out, "namespaces/ns1/channels.yaml"))
	want := map[string]any{"apiVersion": "messaging.knative.dev/v1beta1", "kind": "KafkaChannel", "spec": map[string]any{"numPartitions": float64(3)}}
	if diff := cmp.Diff(want, channels[0]["spec"].(map[string]any)["channelTemplate"]); diff != "" {
		t.Errorf("channel template (-want +got):\n%s", diff)
	}
}

func TestConflictWithGeneratedObject(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"knc.yaml": config, "m.yaml": project + `
---
apiVersion: v1
kind: Service
metadata: {name: knc-ingress}
`})
	_, diags := build(t, dir)
	want := "m.yaml:30:1: Service ns1/knc-ingress is defined twice: at m.yaml:30:1 and generated by plugin knc"
	if len(diags) != 1 || diags[0].String() != want {
		t.Errorf("diagnostics:\n%v\nwant:\n%s", diags, want)
	}
}

func TestRuntimeSettingsFromConfig(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"knc.yaml": config + "runtime:\n  replicas: 2\n", "m.yaml": project})
	_, diags := build(t, dir)
	want := []string{"knc.yaml: runtime.replicas: an embedded JetStream cluster needs at least 3 replicas to survive the loss of one, not 2; use 1, or 3 or more"}
	var got []string
	for _, d := range diags {
		got = append(got, d.String())
	}
	// One per namespace that runs a runtime, reported once.
	got = slices.Compact(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}

	out := mustBuild(t, map[string]string{"knc.yaml": config + "runtime:\n  image: registry.example/knc:v9\n  maxEventBytes: 65536\n  storage: {size: 10Gi}\n", "m.yaml": project})
	objs := objects(t, file(t, out, "namespaces/ns1/runtime.yaml"))
	var settings map[string]any
	for _, c := range byKind(objs, "ConfigMap") {
		if strings.HasPrefix(name(c), "knc-jetstream-") {
			settings = c["data"].(map[string]any)
		}
	}
	if settings["KNC_MAX_BODY_BYTES"] != "65536" || settings["KNC_MAX_STORE_BYTES"] != "9663676416" {
		t.Errorf("settings %v", settings)
	}
	pvc := byKind(objs, "PersistentVolumeClaim")[0]
	if got := pvc["spec"].(map[string]any)["resources"].(map[string]any)["requests"].(map[string]any)["storage"]; got != "10Gi" {
		t.Errorf("volume size %v", got)
	}
	b, _ := yaml.Marshal(byKind(objs, "Deployment")[0])
	if !bytes.Contains(b, []byte("image: registry.example/knc:v9")) {
		t.Errorf("the Deployment does not use runtime.image:\n%s", b)
	}
}

// TestRBACReachesReferencedNamespaces checks that the runtime may read
// Addressables in the namespaces of references it must resolve itself.
func TestRBACReachesReferencedNamespaces(t *testing.T) {
	out := mustBuild(t, map[string]string{"knc.yaml": config + "features: {}\n", "m.yaml": `
apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: default}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: t1}
spec:
  broker: default
  subscriber: {ref: {apiVersion: serving.knative.dev/v1, kind: Service, name: ksvc, namespace: apps}}
---
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: ksvc, namespace: apps}
`})
	var bindings []string
	for _, f := range out.Files {
		if !strings.HasSuffix(f.Path, ".yaml") || strings.HasSuffix(f.Path, "kustomization.yaml") {
			continue
		}
		for _, o := range byKind(objects(t, f.Data), "RoleBinding") {
			bindings = append(bindings, o["metadata"].(map[string]any)["namespace"].(string)+"/"+name(o))
		}
	}
	want := []string{"apps/knc-runtime-ns1", "apps/knc-runtime-ns1-addressables", "ns1/knc-runtime-ns1", "ns1/knc-runtime-ns1-addressables"}
	slices.Sort(bindings)
	if diff := cmp.Diff(want, bindings); diff != "" {
		t.Errorf("RoleBindings (-want +got):\n%s", diff)
	}
}

// TestDeterministic builds the same manifests twice, listed in different
// orders and split differently, and expects the same bytes.
func TestDeterministic(t *testing.T) {
	docs := strings.Split(project, "---\n")
	dirA, dirB := t.TempDir(), t.TempDir()
	a := map[string]string{"knc.yaml": config}
	b := map[string]string{"knc.yaml": config}
	for i, d := range docs {
		a["a/"+string(rune('a'+i))+".yaml"] = d
		b["b/"+string(rune('z'-i))+".yaml"] = d
	}
	writeTree(t, dirA, a)
	writeTree(t, dirB, b)
	outA, diags := build(t, dirA)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	outB, diags := build(t, dirB)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	if diff := cmp.Diff(outA.Files, outB.Files, cmp.Comparer(func(x, y render.File) bool {
		return x.Path == y.Path && bytes.Equal(x.Data, y.Data)
	})); diff != "" {
		t.Errorf("outputs differ (-a +b):\n%s", diff)
	}
	var sa, sb bytes.Buffer
	if err := outA.Stream(&sa); err != nil {
		t.Fatal(err)
	}
	if err := outB.Stream(&sb); err != nil {
		t.Fatal(err)
	}
	if sa.String() != sb.String() {
		t.Error("streams differ")
	}
}

// TestStreamMatchesDirectory checks that the stream holds the objects the
// directory's kustomization builds, in the same order.
func TestStreamMatchesDirectory(t *testing.T) {
	out := mustBuild(t, map[string]string{"knc.yaml": config, "m.yaml": project})
	dir := filepath.Join(t.TempDir(), "out")
	if err := out.Write(dir); err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	if err := out.Stream(&stream); err != nil {
		t.Fatal(err)
	}
	streamed := objects(t, stream.Bytes())
	res := kustomize(t, dir)
	if len(streamed) != len(res) {
		t.Fatalf("stream has %d objects, kustomize builds %d", len(streamed), len(res))
	}
	key := func(o map[string]any) string {
		md := o["metadata"].(map[string]any)
		ns, _ := md["namespace"].(string)
		return o["kind"].(string) + " " + ns + "/" + md["name"].(string)
	}
	var a, b []string
	for i := range streamed {
		a = append(a, key(streamed[i]))
		b = append(b, key(res[i]))
	}
	slices.Sort(a)
	slices.Sort(b)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("objects (-stream +kustomize):\n%s", diff)
	}
}

// kustomize builds dir with kustomize's library, as Flux and Argo CD do.
func kustomize(t *testing.T, dir string) []map[string]any {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out []map[string]any
	for _, r := range m.Resources() {
		obj, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, obj)
	}
	return out
}

func TestWriteReplacesAtomically(t *testing.T) {
	out := mustBuild(t, map[string]string{"knc.yaml": config, "m.yaml": project})
	parent := t.TempDir()
	dir := filepath.Join(parent, "deploy")
	if err := out.Write(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, load.OutputMarker)); err != nil {
		t.Errorf("no marker: %v", err)
	}
	// A file of an earlier build that this one does not produce goes away.
	stale := filepath.Join(dir, "namespaces", "gone", "brokers.yaml")
	writeTree(t, dir, map[string]string{"namespaces/gone/brokers.yaml": "stale"})
	if err := out.Write(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale file survived the build: %v", err)
	}
	// Nothing is left beside the output.
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"deploy"}, names); diff != "" {
		t.Errorf("entries beside the output (-want +got):\n%s", diff)
	}
	got, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, file(t, out, "kustomization.yaml")) {
		t.Error("kustomization.yaml differs from the output")
	}
}

func TestWriteRefusesForeignDirectory(t *testing.T) {
	out := mustBuild(t, map[string]string{"knc.yaml": config, "m.yaml": project})
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"README.md": "mine"})
	err := out.Write(dir)
	if !errors.Is(err, render.ErrNotOutput) {
		t.Fatalf("Write = %v, want ErrNotOutput", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "README.md")); err != nil || string(b) != "mine" {
		t.Errorf("the directory was changed: %q, %v", b, err)
	}
	// An empty directory is fine.
	empty := t.TempDir()
	if err := out.Write(empty); err != nil {
		t.Errorf("Write into an empty directory: %v", err)
	}
}
