package kustomize

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
	"go.yaml.in/yaml/v3"

	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/internal/benchcorpus"
	"github.com/knc-dev/knc/internal/inputfs"
)

// dump writes out all that a render gives its callers: the fields of
// Rendered, and for each document its fields, its YAML and every node's
// kind, tag, style, value, comments and position.
func dump(r *Rendered) string {
	var b strings.Builder
	fmt.Fprintf(&b, "dir %s\nfile %s\nread %q\npatches %q\n", r.Dir, r.File, r.Read, r.Patches)
	for _, d := range r.Diags {
		fmt.Fprintf(&b, "diag %s\n", d)
	}
	for _, d := range r.Docs {
		fmt.Fprintf(&b, "--- %s #%d %s %s %s/%s\n", d.File, d.Index, d.APIVersion, d.Kind, d.Namespace, d.Name)
		out, err := yaml.Marshal(d.Node())
		if err != nil {
			fmt.Fprintf(&b, "marshal: %v\n", err)
		}
		b.Write(out)
		var walk func(n *yaml.Node, depth int)
		walk = func(n *yaml.Node, depth int) {
			fmt.Fprintf(&b, "%s%d %s style=%d %q head=%q line=%q foot=%q at %s\n",
				strings.Repeat(" ", depth), n.Kind, n.Tag, n.Style, n.Value, n.HeadComment, n.LineComment, n.FootComment, d.Pos(n))
			for _, c := range n.Content {
				walk(c, depth+1)
			}
		}
		walk(d.Node(), 0)
	}
	return b.String()
}

// compareRenderers renders dir with knc's renderer allowed and with krusty
// alone, and fails when the two differ in anything a caller sees, or when
// knc's renderer did not, or did, take the kustomization as wanted.
func compareRenderers(t *testing.T, dir, root string, wantFast bool) {
	t.Helper()
	tookFast, diff := renderBoth(t, dir, root)
	if diff != "" {
		t.Errorf("%s: knc's renderer differs from krusty (-krusty +knc):\n%s", dir, diff)
	}
	if tookFast != wantFast {
		t.Errorf("%s: rendered by knc's own renderer: %v, want %v", dir, tookFast, wantFast)
	}
}

// renderBoth renders dir with knc's renderer allowed and with krusty
// alone, and says whether knc's renderer took the kustomization and how
// the two results differ (-krusty +knc).
func renderBoth(t *testing.T, dir, root string) (tookFast bool, diff string) {
	t.Helper()
	opts := Options{Root: root, RelativeTo: root}
	fast, err := render(dir, opts, true)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	krusty, err := render(dir, opts, false)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return fast.fast, cmp.Diff(dump(krusty), dump(fast))
}

// kustomizationDirs lists the directories under root that hold a
// kustomization file.
func kustomizationDirs(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && load.KustomizationFile(inputfs.Disk, path) != "" {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFastRendererMatchesKrustyOnFixtures renders every kustomization of
// the project's fixtures both ways: the GitOps repository, the kustomize
// fixture of the cluster tests, and those of the CLI's scripts.
func TestFastRendererMatchesKrustyOnFixtures(t *testing.T) {
	roots := []string{"../../cmd/knc/cli/testdata/gitops", "../../internal/kubetest/testdata"}
	scripts, err := filepath.Glob("../../cmd/knc/cli/testdata/script/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for _, script := range scripts {
		a, err := txtar.ParseFile(script)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]string{}
		kustomize := false
		for _, f := range a.Files {
			if strings.Contains(f.Name, "..") || filepath.IsAbs(f.Name) {
				continue
			}
			files[f.Name] = string(f.Data)
			kustomize = kustomize || slices.Contains(load.KustomizationFileNames, filepath.Base(f.Name))
		}
		if !kustomize {
			continue
		}
		root := filepath.Join(tmp, strings.TrimSuffix(filepath.Base(script), ".txtar"))
		writeTree(t, root, files)
		roots = append(roots, root)
	}
	fastOnes, all := 0, 0
	for _, root := range roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range kustomizationDirs(t, abs) {
			opts := Options{Root: abs, RelativeTo: abs}
			r, err := render(dir, opts, true)
			if err != nil {
				t.Fatal(err)
			}
			all++
			if r.fast {
				fastOnes++
			}
			compareRenderers(t, dir, abs, r.fast)
		}
	}
	t.Logf("knc's renderer took %d of %d kustomizations", fastOnes, all)
	// The fixtures are mostly within the subset; were none rendered by
	// knc, this test would compare krusty with itself.
	if fastOnes < 5 {
		t.Errorf("knc's renderer took %d of the fixtures' kustomizations, want at least 5", fastOnes)
	}
}

const (
	broker = `apiVersion: eventing.knative.dev/v1
kind: Broker
metadata:
  name: default
  labels: {team: shop, tier: "1"}
  annotations:
    z-last: "yes"
    a-first: x
spec:
  config: {apiVersion: v1, kind: ConfigMap, name: config-br}
  delivery:
    retry: 3
    backoffPolicy: linear # comment kept
    deadLetterSink:
      ref: {apiVersion: v1, kind: Service, name: dls}
    enabled: on
`
	triggers = `# Two Triggers in one file.
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: orders
spec:
  broker: default
  filters:
  - exact: {type: order.created}
  - prefix: {source: /shop}
  subscriber:
    ref:
      apiVersion: serving.knative.dev/v1
      kind: Service
      name: orders
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: audit
  namespace: "other"
spec:
  broker: default
  subscriber:
    uri: http://audit.example.com/
`
	deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  selector:
    matchLabels: {app: app}
  template:
    metadata:
      labels: {app: app}
    spec:
      containers:
      - name: app
        image: app
`
	service = `apiVersion: v1
kind: Service
metadata:
  name: dls
spec:
  ports:
  - port: 80
` // workloads hold images in every place kustomize's image transformer
	// looks, in the forms images are written in, and names that only
	// look like them.
	workloads = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      initContainers:
      - name: init
        image: docker.io/library/nginx # init
      containers:
      - name: web
        image: nginx
      - name: sidecar
        image: "nginx:1.2"
      - name: other
        image: nginx2
      - name: mine
        image: my-nginx:1.0
      - name: none
---
apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: orders
spec:
  template:
    spec:
      containers:
      - image: localhost:5000/app:1
      - image: 'app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'
      - image: app:2@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  schedule: "0 1 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: job
            image: nginx:1.2@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
          volumes:
          - name: data
            image: {reference: app:1}
          - name: empty
            emptyDir: {}
---
apiVersion: v1
kind: Pod
metadata:
  name: single
spec:
  initContainers:
  - name: init
    image: localhost:5000/app
  containers:
  - name: app
    image: app
  volumes:
  - name: tools
    image:
      reference: nginx
      pullPolicy: IfNotPresent
---
apiVersion: sources.knative.dev/v1
kind: ContainerSource
metadata:
  name: heartbeat
spec:
  template:
    spec:
      containers:
      - image: app:3
        deep:
          containers: [{image: nginx}]
`
)

// TestFastRendererMatchesKrusty renders generated kustomizations both ways:
// those in knc's subset must come out of knc's renderer as krusty renders
// them; the others must be left to krusty.
func TestFastRendererMatchesKrusty(t *testing.T) {
	base := map[string]string{
		"base/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- broker.yaml\n- triggers.yaml\n- service.yaml\n",
		"base/broker.yaml":        broker,
		"base/triggers.yaml":      triggers,
		"base/service.yaml":       service,
	}
	overlay := func(kustomization string, files ...string) map[string]string {
		m := map[string]string{"overlay/kustomization.yaml": kustomization}
		for i := 0; i+1 < len(files); i += 2 {
			m["overlay/"+files[i]] = files[i+1]
		}
		return m
	}
	const brokerPatch = "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: default\n"
	cases := []struct {
		name  string
		files map[string]string
		fast  bool
	}{
		{"base", nil, true},
		{"overlay of a base", overlay("resources: [../base]\n"), true},
		{"namespace", overlay("resources: [../base]\nnamespace: prod\n"), true},
		{"namespace in base and overlay", map[string]string{
			"mid/kustomization.yaml":     "resources: [../base]\nnamespace: mid\n",
			"overlay/kustomization.yaml": "resources: [../mid]\nnamespace: prod\n",
		}, true},
		{"nested maps", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n",
			"patch.yaml", brokerPatch+"  labels: {env: prod, team: ops}\n  annotations: {b-new: \"true\"}\nspec:\n  delivery:\n    retry: 10\n    timeout: PT5S # new\n    deadLetterSink:\n      uri: /dead\n  extra:\n    deep: {a: 1, b: [x, y]}\n    yes: no\n"), true},
		{"list replaced", overlay("resources: [../base]\npatchesStrategicMerge:\n- patch.yaml\n",
			"patch.yaml", "apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata:\n  name: orders\nspec:\n  filters:\n  - suffix: {type: .created}\n"), true},
		{"null deletes", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n",
			"patch.yaml", brokerPatch+"spec:\n  config: null\n  delivery:\n    backoffPolicy: ~\n  absent: null\n"), true},
		{"$patch: delete on a map", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n",
			"patch.yaml", brokerPatch+"spec:\n  delivery:\n    deadLetterSink:\n      $patch: delete\n"), true},
		{"$patch: delete on an object", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n",
			"patch.yaml", "apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata:\n  name: orders\n$patch: delete\n"), true},
		{"$patch: replace on a map", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n",
			"patch.yaml", brokerPatch+"spec:\n  delivery:\n    $patch: replace\n    retry: 1\n    gone: null\n"), true},
		{"patches on several objects, several files", overlay("resources: [../base]\nnamespace: prod\npatches:\n- path: broker.yaml\n- path: triggers.yaml\n",
			"broker.yaml", brokerPatch+"spec:\n  delivery:\n    retry: 1\n",
			"triggers.yaml", "apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata:\n  name: orders\nspec:\n  broker: other\n---\napiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata:\n  name: audit\n  namespace: other\nspec:\n  broker: other\n"), true},
		{"patch after the base's namespace, by the old one", map[string]string{
			"mid/kustomization.yaml":     "resources: [../base]\nnamespace: mid\n",
			"overlay/kustomization.yaml": "resources: [../mid]\npatches:\n- path: patch.yaml\n",
			"overlay/patch.yaml":         brokerPatch + "spec:\n  delivery:\n    retry: 1\n",
		}, true},
		{"patch by the new namespace", map[string]string{
			"mid/kustomization.yaml":     "resources: [../base]\nnamespace: mid\n",
			"overlay/kustomization.yaml": "resources: [../mid]\npatches:\n- path: patch.yaml\n",
			"overlay/patch.yaml":         "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: default\n  namespace: mid\nspec:\n  delivery:\n    retry: 1\n",
		}, true},
		{"objects of the overlay's own", overlay("resources: [../base, more.yaml]\n",
			"more.yaml", "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: second\n"), true},
		{"document markers and comments", overlay("resources: [more.yaml]\n", "more.yaml",
			"---\n# first\napiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: a # the name\n---\n\n# between\n---\n"+
				"apiVersion: eventing.knative.dev/v1 # av\nkind: Broker\nmetadata:\n  name: b\nspec: {}\n# foot\n---\n"), true},
		{"byte order mark", overlay("resources: [bom.yaml]\n", "bom.yaml", "\ufeff"+service), false},
		{"empty file", overlay("resources: [../base, empty.yaml]\n", "empty.yaml", "# nothing yet\n"), true},

		// Labels and annotations, which kustomize's transformers write in
		// metadata (api/filters/labels, api/filters/annotations).
		{"labels", overlay("resources: [../base]\nlabels:\n- pairs: {env: prod}\n"), true},
		{"labels of several entries", overlay("resources: [../base]\nlabels:\n- pairs: {env: prod, team: ops}\n- pairs:\n    tier: \"2\"\n    \"yes\": \"on\"\n    app.kubernetes.io/part-of: shop\n  includeSelectors: false\n  includeTemplates: false\n- pairs: {}\n"), true},
		{"labels with templates on kinds without templates", overlay("resources: [../base]\nlabels:\n- pairs: {env: prod}\n  includeTemplates: true\n"), true},
		{"label values that need quotes", overlay("resources: [../base]\nlabels:\n- pairs: {version: \"1.0\", enabled: \"true\", tier: \"3\", word: \"no\"}\n"), true},
		{"commonLabels on Knative kinds", overlay("resources: [../base/broker.yaml, ../base/triggers.yaml]\ncommonLabels: {env: prod, team: ops}\nlabels:\n- pairs: {env: staging, zone: a}\n"), true},
		{"commonAnnotations", overlay("resources: [../base]\ncommonAnnotations: {note: \"yes\", a-first: replaced, example.com/owner: shop}\n"), true},
		{"labels and annotations after namespace and patches", overlay("resources: [../base]\nnamespace: prod\ncommonAnnotations: {b-new: \"false\"}\nlabels:\n- pairs: {env: prod}\npatches:\n- path: patch.yaml\n",
			"patch.yaml", brokerPatch+"  labels: {env: staging, team: ops}\n  annotations: {b-new: \"true\"}\nspec:\n  delivery:\n    retry: 1\n"), true},
		// kustomize's selector field spec for Service names its kind and
		// version, not its group (commonlabels.go).
		{"labels with selectors on a Service", overlay("resources: [../base]\nlabels:\n- pairs: {env: prod}\n  includeSelectors: true\n"), true},
		{"commonLabels on a Service", overlay("resources: [../base]\ncommonLabels: {env: prod}\n"), true},
		{"commonLabels on Services with selectors and labels", overlay("resources: [services.yaml]\ncommonLabels: {app: shop, env: \"yes\", tier: \"2\"}\n",
			"services.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  labels: {env: x, app: 'old'}\nspec:\n  selector:\n    app: \"old\" # replaced\n  ports: [{port: 80}]\n"+
				"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: b\n  labels:\n    tier: '1'\n"+
				"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: c\nspec:\n  selector: {}\n"+
				"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: d\nspec: {type: ExternalName, externalName: example.com}\n"), true},
		{"commonLabels on a Knative Service", overlay("resources: [../base/broker.yaml, ksvc.yaml]\ncommonLabels: {env: prod}\n",
			"ksvc.yaml", "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata:\n  name: orders\nspec:\n  template:\n    spec:\n      containers:\n      - image: orders\n"), true},
		{"commonLabels on a Service of another version", overlay("resources: [svc.yaml]\ncommonLabels: {env: prod}\n",
			"svc.yaml", "apiVersion: example.com/v2\nkind: Service\nmetadata:\n  name: orders\nspec:\n  selector: {app: orders}\n"), true},
		{"labels and annotations at every level", map[string]string{
			"base/kustomization.yaml":    "resources: [broker.yaml, triggers.yaml, service.yaml]\nlabels:\n- pairs: {layer: base, env: dev}\ncommonAnnotations: {layer: base}\n",
			"mid/kustomization.yaml":     "resources: [../base]\nnamespace: mid\nlabels:\n- pairs: {layer: mid}\n",
			"overlay/kustomization.yaml": "resources: [../mid, more.yaml]\nnamespace: prod\npatchesStrategicMerge: [patch.yaml]\nlabels:\n- pairs: {env: prod}\ncommonAnnotations: {layer: overlay, z-last: \"no\"}\n",
			"overlay/more.yaml":          "apiVersion: sources.knative.dev/v1\nkind: PingSource\nmetadata:\n  name: ping\n  labels:\n    layer: own # kept until a transformer sets it\nspec:\n  schedule: '*/1 * * * *'\n",
			"overlay/patch.yaml":         "apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata:\n  name: orders\n  namespace: default\n  labels: {layer: patch}\nspec:\n  broker: other\n",
		}, true},

		// Images, which kustomize's image tag transformer rewrites in
		// every containers and initContainers list and in the fields its
		// field specs name (api/filters/imagetag,
		// api/internal/konfig/builtinpluginconsts/images.go).
		{"images: a new tag", overlay("resources: [workloads.yaml]\nimages:\n- name: nginx\n  newTag: \"1.3\"\n", "workloads.yaml", workloads), true},
		{"images: registries, ports and digests", overlay("resources: [workloads.yaml]\nimages:\n"+
			"- name: docker.io/library/nginx\n  newTag: stable\n"+
			"- name: localhost:5000/app\n  newName: registry.example.com/team/app\n"+
			"- name: app\n  digest: sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210\n", "workloads.yaml", workloads), true},
		{"images: a new name only", overlay("resources: [workloads.yaml]\nimages:\n- name: nginx\n  newName: example.com/nginx\n- name: app\n  newName: app\n", "workloads.yaml", workloads), true},
		{"images: a tag and a digest", overlay("resources: [workloads.yaml]\nimages:\n- name: app\n  newTag: v2\n  digest: sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210\n- name: nginx\n  newName: nginx\n  newTag: \"1.4\"\n", "workloads.yaml", workloads), true},
		{"images: a tag suffix", overlay("resources: [workloads.yaml]\nimages:\n- name: nginx\n  tagSuffix: -debug\n- name: app\n  tagSuffix: \"-rc.1\"\n  newName: other\n", "workloads.yaml", workloads), true},
		{"images: a tag suffix that is a number", overlay("resources: [workloads.yaml]\nimages:\n- name: nginx\n  tagSuffix: .1\n", "workloads.yaml", workloads), false},
		{"images: a name with a dot, which kustomize reads as any character", overlay("resources: [workloads.yaml]\nimages:\n- name: ngin.\n  newTag: dot\n- name: docker.io/library/nginx2\n  newTag: none\n", "workloads.yaml", workloads), true},
		{"images: entries that change each other's images", overlay("resources: [workloads.yaml]\nimages:\n- name: nginx\n  newName: app\n- name: app\n  newTag: last\n- name: my-nginx\n  newName: nginx\n", "workloads.yaml", workloads), true},
		{"images in base and overlay, with namespace, patches and labels", map[string]string{
			"base/kustomization.yaml":    "resources: [workloads.yaml, broker.yaml]\nnamespace: base\nlabels:\n- pairs: {layer: base}\nimages:\n- name: nginx\n  newTag: base\n",
			"base/workloads.yaml":        workloads,
			"overlay/kustomization.yaml": "resources: [../base]\nnamespace: prod\nlabels:\n- pairs: {env: prod}\npatches:\n- path: patch.yaml\nimages:\n- name: nginx\n  newTag: prod\n- name: app\n  newName: example.com/app\n",
			"overlay/patch.yaml":         "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata:\n  name: orders\nspec:\n  template:\n    spec:\n      containers:\n      - image: app:patched # from the patch\n",
		}, true},
		{"images on Knative objects without images", overlay("resources: [../base]\nimages:\n- name: app\n  newTag: v2\n"), true},
		{"images: a new tag that is a number", overlay("resources: [workloads.yaml]\nimages:\n- name: nginx\n  newTag: 1.3\n", "workloads.yaml", workloads), false},
		{"images: a name that is a regular expression", overlay("resources: [workloads.yaml]\nimages:\n- name: ngin[x]\n  newTag: v2\n", "workloads.yaml", workloads), false},
		{"images: an unknown field", overlay("resources: [workloads.yaml]\nimages:\n- name: nginx\n  newTags: v2\n", "workloads.yaml", workloads), false},
		{"images: an image that is not a string", overlay("resources: [pod.yaml]\nimages:\n- name: nginx\n  newTag: v2\n",
			"pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - image: 1\n"), false},
		{"images: containers that are a map", overlay("resources: [pod.yaml]\nimages:\n- name: nginx\n  newTag: v2\n",
			"pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers: {image: nginx}\n"), false},
		{"images: a null template", overlay("resources: [deploy.yaml]\nimages:\n- name: nginx\n  newTag: v2\n",
			"deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template: ~\n"), false},
		{"images: null containers", overlay("resources: [pod.yaml]\nimages:\n- name: nginx\n  newTag: v2\n",
			"pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  initContainers: [{image: nginx}]\n"), false},

		// Outside the subset: krusty renders them, and the output is the same.
		{"commonLabels on a Service whose selector is null", overlay("resources: [svc.yaml]\ncommonLabels: {env: prod}\n",
			"svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: orders\nspec:\n  selector: ~\n"), false},
		{"commonLabels on a Service whose spec is a list", overlay("resources: [svc.yaml]\ncommonLabels: {env: prod}\n",
			"svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: orders\nspec: [a]\n"), false},
		{"commonLabels on a Deployment", overlay("resources: [../base, deploy.yaml]\ncommonLabels: {env: prod}\n", "deploy.yaml", deployment), false},
		{"labels with templates on a Deployment", overlay("resources: [../base, deploy.yaml]\nlabels:\n- pairs: {env: prod}\n  includeTemplates: true\n", "deploy.yaml", deployment), false},
		{"commonAnnotations on a Deployment", overlay("resources: [../base, deploy.yaml]\ncommonAnnotations: {env: prod}\n", "deploy.yaml", deployment), false},
		{"labels on a Deployment", overlay("resources: [../base, deploy.yaml]\nlabels:\n- pairs: {env: prod}\n", "deploy.yaml", deployment), true},
		{"empty transformers on a Deployment", overlay("resources: [../base, deploy.yaml]\ncommonAnnotations: {}\ncommonLabels: {}\nlabels:\n- pairs: {}\n  includeSelectors: true\n", "deploy.yaml", deployment), true},
		{"labels with fields", overlay("resources: [../base]\nlabels:\n- pairs: {env: prod}\n  fields:\n  - path: spec/env\n    kind: Broker\n    create: true\n"), false},
		{"labels with volume claim templates", overlay("resources: [../base]\nlabels:\n- pairs: {env: prod}\n  includeVolumeClaimTemplates: true\n"), false},
		{"label value that YAML 1.1 reads as a boolean", overlay("resources: [../base]\ncommonAnnotations: {enabled: yes}\n"), false},
		{"label value that is a number", overlay("resources: [../base]\nlabels:\n- pairs: {tier: 2}\n"), false},
		{"includeSelectors that YAML 1.1 reads as a boolean", overlay("resources: [../base]\nlabels:\n- pairs: {env: prod}\n  includeSelectors: no\n"), false},
		{"namePrefix", overlay("resources: [../base]\nnamePrefix: prod-\n"), false},
		{"configMapGenerator", overlay("resources: [../base]\nconfigMapGenerator:\n- name: cfg\n  literals: [a=b]\n"), false},
		{"inline patch", overlay("resources: [../base]\npatches:\n- patch: |\n    " + strings.ReplaceAll(brokerPatch, "\n", "\n    ") + "spec: {x: 1}\n"), false},
		{"patch with a target", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n  target: {kind: Broker}\n", "patch.yaml", brokerPatch+"  labels: {x: y}\nspec: {x: 1}\n"), true},
		{"patch with a target of another name", overlay("resources: [../base]\nnamespace: prod\npatches:\n- path: patch.yaml\n  target:\n    group: eventing.knative.dev\n    version: v1\n    kind: Trigger\n    name: ord.*\n    namespace: default\n",
			"patch.yaml", "apiVersion: v1\nkind: Anything\nmetadata:\n  name: any\n  annotations: {a: b}\nspec:\n  broker: other\n"), true},
		{"patch with a target selecting two", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n  target: {kind: Trigger}\n", "patch.yaml", brokerPatch+"spec: {x: 1}\n"), false},
		{"patch with a target selecting none", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n  target: {kind: Trigger, name: nobody}\n", "patch.yaml", brokerPatch+"spec: {x: 1}\n"), false},
		{"patch with a label selector", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n  target: {kind: Broker, labelSelector: team=shop}\n", "patch.yaml", brokerPatch+"spec: {x: 1}\n"), false},
		{"patch with a target and two documents", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n  target: {kind: Broker}\n", "patch.yaml", brokerPatch+"spec: {x: 1}\n---\n"+brokerPatch+"spec: {y: 1}\n"), false},
		{"patch with a target on a built-in kind", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n  target: {kind: Service}\n", "patch.yaml", brokerPatch+"spec: {x: 1}\n"), false},
		{"JSON 6902 patch", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n  target: {kind: Broker, name: default}\n", "patch.yaml", "- op: replace\n  path: /spec/delivery/retry\n  value: 1\n"), false},
		{"patch on a built-in kind", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n", "patch.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: dls\nspec:\n  ports:\n  - port: 81\n"), false},
		{"namespace on a cluster-scoped kind", overlay("resources: [../base, ns.yaml]\nnamespace: prod\n", "ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: prod\n"), false},
		{"List", overlay("resources: [list.yaml]\n", "list.yaml", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n"), false},
		{"components", map[string]string{
			"comp/kustomization.yaml":    "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nnamespace: c\n",
			"overlay/kustomization.yaml": "resources: [../base]\ncomponents: [../comp]\n",
		}, false},
		{"anchors", overlay("resources: [a.yaml]\n", "a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: &d {k: v}\nmore: *d\n"), false},
		{"$patch: replace on an object", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n", "patch.yaml", brokerPatch+"$patch: replace\nspec: {}\n"), false},
		{"$retainKeys", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n", "patch.yaml", brokerPatch+"spec:\n  $retainKeys: [delivery]\n"), false},
		{"schema comment", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n", "patch.yaml", brokerPatch+"spec:\n  delivery:\n    retry: 1 # {\"type\": \"integer\"}\n"), false},

		// kustomize errors: krusty says them, in its words.
		{"missing resource", overlay("resources: [../base, nowhere.yaml]\n"), false},
		{"patch without target", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n", "patch.yaml", "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: absent\n"), false},
		{"duplicate object", overlay("resources: [../base, ../base/broker.yaml]\n"), false},
		{"namespace makes a duplicate", overlay("resources: [../base, dup.yaml]\nnamespace: other\n", "dup.yaml",
			"apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata:\n  name: orders\n  namespace: x\n"), false},
		{"unknown field", overlay("resources: [../base]\nnamespaces: prod\n"), false},
		{"patch changes a map into a scalar", overlay("resources: [../base]\npatches:\n- path: patch.yaml\n", "patch.yaml", brokerPatch+"spec:\n  delivery: none\n"), false},
		{"file outside the root", overlay("resources: [../../outside.yaml]\n"), false},
		{"cycle", map[string]string{
			"a/kustomization.yaml":       "resources: [../overlay]\n",
			"overlay/kustomization.yaml": "resources: [../a]\n",
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "repo")
			writeTree(t, dir, map[string]string{"outside.yaml": service})
			writeTree(t, root, base)
			writeTree(t, root, c.files)
			target := filepath.Join(root, "overlay")
			if c.files == nil {
				target = filepath.Join(root, "base")
			}
			compareRenderers(t, target, root, c.fast)
		})
	}
}

// TestFastRendererMatchesKrustyOnCorpus renders the benchmark's layouts.
func TestFastRendererMatchesKrustyOnCorpus(t *testing.T) {
	for _, layout := range []benchcorpus.Layout{benchcorpus.Overlays, benchcorpus.PatchedOverlays, benchcorpus.LabelledOverlays, benchcorpus.SelectorLabelledOverlays, benchcorpus.ImageOverlays, benchcorpus.JSONPatchedOverlays} {
		dir := t.TempDir()
		if err := benchcorpus.WriteLayout(dir, benchcorpus.Shape{Objects: 100}, 2, layout); err != nil {
			t.Fatal(err)
		}
		for _, overlay := range kustomizationDirs(t, filepath.Join(dir, "overlays")) {
			compareRenderers(t, overlay, dir, layout != benchcorpus.JSONPatchedOverlays)
		}
	}
}

// TestFastRendererMatchesKrustyOnRandomPatches renders overlays that patch
// a Broker, both generated at random from a fixed seed: maps, lists and
// scalars in flow and block style, quoted or not, with comments, nulls and
// $patch directives; applied as patches, through a target or not, and as
// patchesStrategicMerge; with labels, commonLabels and commonAnnotations
// in the base and the overlay, or not, and a v1 Service in the base, whose
// selector kustomize labels too, or not.
func TestFastRendererMatchesKrustyOnRandomPatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 5084))
	cases := 150
	if testing.Short() {
		cases = 30
	}
	fastOnes := 0
	for i := range cases {
		g := &treeGen{rng: rng}
		object := g.object(false)
		patch := g.object(true)
		root := t.TempDir()
		kustomization := "resources: [../base]\n"
		switch rng.IntN(3) {
		case 0:
			kustomization += "patches:\n- path: patch.yaml\n"
		case 1:
			kustomization += "patches:\n- path: patch.yaml\n  target: {kind: Broker, name: default}\n"
		default:
			kustomization += "patchesStrategicMerge: [patch.yaml]\n"
		}
		if rng.IntN(2) == 0 {
			kustomization += "namespace: prod\n"
		}
		kustomization += g.metadataTransformers()
		baseResources := "resources: [broker.yaml]\n"
		if rng.IntN(2) == 0 {
			baseResources = "resources: [broker.yaml, service.yaml]\n"
		}
		writeTree(t, root, map[string]string{
			"base/service.yaml":          g.service(),
			"base/kustomization.yaml":    baseResources + g.metadataTransformers(),
			"base/broker.yaml":           object,
			"overlay/kustomization.yaml": kustomization,
			"overlay/patch.yaml":         patch,
		})
		tookFast, diff := renderBoth(t, filepath.Join(root, "overlay"), root)
		if tookFast {
			fastOnes++
		}
		if diff != "" {
			t.Errorf("case %d: knc's renderer differs from krusty (-krusty +knc):\nobject:\n%s\npatch:\n%s\nkustomization:\n%s\n%s", i, object, patch, kustomization, diff)
		}
	}
	t.Logf("knc's renderer took %d of %d cases", fastOnes, cases)
	if fastOnes < cases/3 {
		t.Errorf("knc's renderer took %d of %d cases, want at least a third", fastOnes, cases)
	}
}

// treeGen writes random Brokers and patches to them.
type treeGen struct {
	rng *rand.Rand
}

func (g *treeGen) object(patch bool) string {
	md := &yaml.Node{Kind: yaml.MappingNode}
	add := func(m *yaml.Node, key string, v *yaml.Node) {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	}
	add(md, "name", g.scalar("default"))
	if !patch && g.rng.IntN(3) == 0 {
		add(md, "namespace", g.scalar("team"))
	}
	for _, field := range []string{"labels", "annotations"} {
		if g.rng.IntN(2) == 0 {
			m := &yaml.Node{Kind: yaml.MappingNode, Style: g.flow()}
			for _, k := range g.keys() {
				add(m, k, g.scalar(g.word()))
			}
			add(md, field, m)
		}
	}
	root := &yaml.Node{Kind: yaml.MappingNode}
	add(root, "apiVersion", g.scalar("eventing.knative.dev/v1"))
	add(root, "kind", g.scalar("Broker"))
	add(root, "metadata", md)
	add(root, "spec", g.mapping(3, patch))
	out, err := yaml.Marshal(root)
	if err != nil {
		panic(err)
	}
	return string(out)
}

// metadataTransformers writes some of labels, commonLabels and
// commonAnnotations of a kustomization, or none, mostly with plain keys
// and words, some of them the objects' own, quoted or not.
func (g *treeGen) metadataTransformers() string {
	pairs := func() *yaml.Node {
		m := &yaml.Node{Kind: yaml.MappingNode, Style: g.flow()}
		keys := []string{"a", "env", "z", "example.com/team"}
		g.rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		keys = keys[:1+g.rng.IntN(2)]
		if g.rng.IntN(12) == 0 {
			keys = g.keys()
		}
		for _, k := range keys {
			word := []string{"prod", "x", "v1.0", "two words"}[g.rng.IntN(4)]
			if g.rng.IntN(12) == 0 {
				word = g.word()
			}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, g.scalar(word))
		}
		return m
	}
	root := &yaml.Node{Kind: yaml.MappingNode}
	add := func(key string, v *yaml.Node) {
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	}
	if g.rng.IntN(2) == 0 {
		list := &yaml.Node{Kind: yaml.SequenceNode}
		for range 1 + g.rng.IntN(2) {
			entry := &yaml.Node{Kind: yaml.MappingNode}
			entry.Content = append(entry.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "pairs"}, pairs())
			for _, flag := range []string{"includeSelectors", "includeTemplates"} {
				if g.rng.IntN(3) == 0 {
					entry.Content = append(entry.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: flag},
						&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: []string{"true", "false"}[g.rng.IntN(2)]})
				}
			}
			list.Content = append(list.Content, entry)
		}
		add("labels", list)
	}
	for _, field := range []string{"commonLabels", "commonAnnotations"} {
		if g.rng.IntN(3) == 0 {
			add(field, pairs())
		}
	}
	if len(root.Content) == 0 {
		return ""
	}
	out, err := yaml.Marshal(root)
	if err != nil {
		panic(err)
	}
	return string(out)
}

// service writes a v1 Service whose labels and selector, each there or
// not, hold some of the keys the transformers set.
func (g *treeGen) service() string {
	add := func(m *yaml.Node, key string, v *yaml.Node) {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	}
	pairs := func() *yaml.Node {
		m := &yaml.Node{Kind: yaml.MappingNode, Style: g.flow()}
		keys := []string{"a", "env", "z"}
		g.rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		for _, k := range keys[:g.rng.IntN(3)] {
			add(m, k, g.scalar([]string{"x", "prod", "yes"}[g.rng.IntN(3)]))
		}
		return m
	}
	md := &yaml.Node{Kind: yaml.MappingNode}
	add(md, "name", g.scalar("sink"))
	if g.rng.IntN(2) == 0 {
		add(md, "labels", pairs())
	}
	root := &yaml.Node{Kind: yaml.MappingNode}
	add(root, "apiVersion", g.scalar("v1"))
	add(root, "kind", g.scalar("Service"))
	add(root, "metadata", md)
	if g.rng.IntN(3) > 0 {
		spec := &yaml.Node{Kind: yaml.MappingNode, Style: g.flow()}
		if g.rng.IntN(3) > 0 {
			add(spec, "selector", pairs())
		}
		add(spec, "type", g.scalar("ClusterIP"))
		add(root, "spec", spec)
	}
	out, err := yaml.Marshal(root)
	if err != nil {
		panic(err)
	}
	return string(out)
}

func (g *treeGen) flow() yaml.Style {
	if g.rng.IntN(3) == 0 {
		return yaml.FlowStyle
	}
	return 0
}

func (g *treeGen) keys() []string {
	all := []string{"a", "b", "delivery", "retry", "yes", "z"}
	g.rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:1+g.rng.IntN(3)]
}

func (g *treeGen) word() string {
	return []string{"x", "yes", "on", "1", "PT1S", "two words", "", "line\nbreak"}[g.rng.IntN(8)]
}

func (g *treeGen) scalar(v string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
	switch g.rng.IntN(6) {
	case 0:
		n.Style = yaml.DoubleQuotedStyle
	case 1:
		n.Style = yaml.SingleQuotedStyle
	case 2:
		n.LineComment = "# note"
	}
	return n
}

func (g *treeGen) value(depth int, patch bool) *yaml.Node {
	switch r := g.rng.IntN(10); {
	case r < 2 && depth > 0:
		return g.mapping(depth-1, patch)
	case r < 4:
		l := &yaml.Node{Kind: yaml.SequenceNode, Style: g.flow()}
		for range g.rng.IntN(3) {
			if g.rng.IntN(2) == 0 && depth > 0 {
				l.Content = append(l.Content, g.mapping(0, false))
			} else {
				l.Content = append(l.Content, g.scalar(g.word()))
			}
		}
		return l
	case r < 5:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "3"}
	case r < 6 && patch:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: []string{"null", "~", ""}[g.rng.IntN(3)]}
	default:
		return g.scalar(g.word())
	}
}

func (g *treeGen) mapping(depth int, patch bool) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Style: g.flow()}
	if patch && g.rng.IntN(6) == 0 {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "$patch"},
			&yaml.Node{Kind: yaml.ScalarNode, Value: []string{"delete", "replace", "merge"}[g.rng.IntN(3)]})
	}
	for _, k := range g.keys() {
		key := &yaml.Node{Kind: yaml.ScalarNode, Value: k}
		if g.rng.IntN(5) == 0 {
			key.HeadComment = "# about " + k
		}
		m.Content = append(m.Content, key, g.value(depth, patch))
	}
	return m
}

// FuzzFastRenderer renders an overlay that sets a namespace, or not, a
// label and an annotation, or not, and applies a patch file to a base,
// both ways, and fails when knc's renderer takes the overlay and renders
// anything krusty does not.
func FuzzFastRenderer(f *testing.F) {
	f.Add(broker+"---\n"+service, "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: default\nspec:\n  delivery:\n    retry: 10\n", "prod", false, "")
	f.Add(triggers, "apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata:\n  name: orders\n  labels: {a: b}\nspec:\n  filters: []\n  subscriber: {ref: null, uri: /x}\n", "", true, "prod")
	f.Add(triggers, "apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata:\n  name: audit\n  namespace: other\nspec:\n  $patch: delete\n", "x", false, "yes")
	f.Add(broker, "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: default\n  annotations:\n    n: \"1\"\n    m: |\n      two\n      lines\nspec:\n  delivery: {$patch: replace, retry: 1}\n  new: {a: {}, b: [], c: 'yes'}\n", "", true, "1.0")
	f.Fuzz(func(t *testing.T, resources, patch, namespace string, strategicMerge bool, label string) {
		root := t.TempDir()
		kustomization := "resources: [../base]\npatches:\n- path: patch.yaml\n"
		if strategicMerge {
			kustomization = "resources: [../base]\npatchesStrategicMerge: [patch.yaml]\n"
		}
		if namespace != "" {
			kustomization += "namespace: " + strconvQuote(namespace) + "\n"
		}
		if label != "" {
			kustomization += "labels:\n- pairs: {env: " + strconvQuote(label) + "}\ncommonAnnotations: {note: " + strconvQuote(label) + "}\n"
		}
		writeTree(t, root, map[string]string{
			"base/kustomization.yaml":    "resources: [objects.yaml]\n",
			"base/objects.yaml":          resources,
			"overlay/kustomization.yaml": kustomization,
			"overlay/patch.yaml":         patch,
		})
		opts := Options{Root: root, RelativeTo: root}
		dir := filepath.Join(root, "overlay")
		fast, err := render(dir, opts, true)
		if err != nil || !fast.fast {
			return // krusty alone: nothing to compare
		}
		krusty, err := render(dir, opts, false)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(dump(krusty), dump(fast)); diff != "" {
			t.Errorf("knc's renderer differs from krusty (-krusty +knc):\n%s", diff)
		}
	})
}

// strconvQuote writes s as a YAML double-quoted scalar.
func strconvQuote(s string) string {
	out, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Style: yaml.DoubleQuotedStyle, Value: s})
	if err != nil {
		return `""`
	}
	return strings.TrimSpace(string(out))
}

// TestFastRendererLeavesLinksToKrusty gives a symbolic link among the
// resources, once to a file inside the repository and once to one outside
// it: knc's renderer takes neither, and krusty reads the first and refuses
// the second, as Flux does.
func TestFastRendererLeavesLinksToKrusty(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	writeTree(t, dir, map[string]string{"outside.yaml": service})
	writeTree(t, root, map[string]string{
		"base/kustomization.yaml": "resources: [inside.yaml]\n",
		"objects/service.yaml":    service,
		"bad/kustomization.yaml":  "resources: [outside.yaml]\n",
	})
	for link, target := range map[string]string{
		filepath.Join(root, "base", "inside.yaml"): filepath.Join(root, "objects", "service.yaml"),
		filepath.Join(root, "bad", "outside.yaml"): filepath.Join(dir, "outside.yaml"),
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	compareRenderers(t, filepath.Join(root, "base"), root, false)
	compareRenderers(t, filepath.Join(root, "bad"), root, false)
	r, err := Render(filepath.Join(root, "bad"), Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Diags) == 0 || len(r.Docs) > 0 {
		t.Errorf("a link out of the repository was followed: %d documents, diagnostics %v", len(r.Docs), r.Diags)
	}
}
