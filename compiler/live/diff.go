package live

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/check"
	"github.com/knc-dev/knc/compiler/diff"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/compiler/routes"
	"github.com/knc-dev/knc/internal/cuelimit"
	"github.com/knc-dev/knc/internal/knative"
)

// DefaultFieldManager is the field manager Flux's kustomize-controller
// applies with: the dry run must apply as the real apply does, or fields
// the build no longer sets would stay owned by the real applier and not
// show as removed.
const DefaultFieldManager = "kustomize-controller"

// ManagedByLabel is the label knc writes on the objects it generates;
// SpecHashAnnotation the annotation it writes on the Knative objects it
// compiles. Without a Flux inventory, they say which live objects belong
// to knc's output.
const (
	ManagedByLabel     = "app.kubernetes.io/managed-by"
	SpecHashAnnotation = "knc.dev/spec-hash"
)

// DiffOptions say how the build is compared with the cluster.
type DiffOptions struct {
	// FieldManager is the field manager of the dry run: the one the
	// output is applied with. "" is DefaultFieldManager.
	FieldManager string
	// Kustomization, NAMESPACE/NAME, names the Flux Kustomization that
	// applies the output: its status.inventory lists what belongs to it,
	// and so what the apply would prune. "" decides by knc's labels.
	Kustomization string
}

// DiffReport is what applying a build would change in the cluster: the
// semantic report of package diff, from the live objects to the objects
// the dry run returns, with what the apply would prune and what the API
// server refuses.
type DiffReport struct {
	*diff.Report
	// Context names the kubeconfig context.
	Context string `json:"context"`
	// Inventory says how the objects that belong to the output were
	// found: a Flux Kustomization's inventory, or knc's labels.
	Inventory string `json:"inventory"`
	// Prune lists the live objects that belong to the output and that the
	// build no longer has: the apply deletes them.
	Prune []Ref `json:"prune"`
	// Rejected lists the objects whose dry run the API server refused,
	// with its message: the apply would fail.
	Rejected []Rejection `json:"rejected"`
}

// Changed reports whether applying the build would change anything, or
// fail.
func (r *DiffReport) Changed() bool {
	return r.Different || len(r.Prune) > 0 || len(r.Rejected) > 0
}

// Rejection is an object the API server refused in the dry run.
type Rejection struct {
	Ref
	Message string `json:"message"`
}

// OutputObjects decodes the objects of a build's output, in the order
// kustomize would apply them. The build must have one deploy unit, as
// knc build without -o has.
func OutputObjects(res *compiler.Result) ([]*unstructured.Unstructured, error) {
	var buf bytes.Buffer
	if err := res.Output.Stream(&buf); err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(&buf, 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decoding the build: %w", err)
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	return objs, nil
}

// applied is one object of the build: as it is live, and as the dry run
// says it would be.
type applied struct {
	built, live, after *unstructured.Unstructured
	rejected           string
}

// Diff compares the build res (one deploy unit, rendered and with its
// routes) with the cluster: each object of the output is read live and
// server-side applied with dryRun=All, and the live objects that belong to
// the output but not to the build are the ones the apply would prune.
// Nothing is written. Secret data is never in the report: a changed value
// shows as changed, not as what it is.
func Diff(ctx context.Context, c *Cluster, res *compiler.Result, opts DiffOptions) (*DiffReport, error) {
	if opts.FieldManager == "" {
		opts.FieldManager = DefaultFieldManager
	}
	objs, err := OutputObjects(res)
	if err != nil {
		return nil, err
	}
	crds := map[schema.GroupKind]bool{}
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			g, _, _ := unstructured.NestedString(o.Object, "spec", "group")
			k, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
			crds[schema.GroupKind{Group: g, Kind: k}] = true
		}
	}
	results := make([]applied, len(objs))
	errs := make([]error, len(objs))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, o := range objs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], errs[i] = dryRun(ctx, c, o, opts.FieldManager, crds)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	report := &DiffReport{Context: c.Context, Prune: []Ref{}, Rejected: []Rejection{}}
	var prune []*unstructured.Unstructured
	if opts.Kustomization != "" {
		report.Inventory = "the inventory of Flux Kustomization " + opts.Kustomization
		prune, err = pruneByInventory(ctx, c, opts.Kustomization, objs)
	} else {
		report.Inventory = "the label " + ManagedByLabel + "=knc and, on Knative objects, the annotation " + SpecHashAnnotation
		prune, err = pruneByLabels(ctx, c, objs)
	}
	if err != nil {
		return nil, err
	}
	var before, after []*unstructured.Unstructured
	for _, a := range results {
		if a.rejected != "" {
			report.Rejected = append(report.Rejected, Rejection{Ref: refOf(a.built), Message: a.rejected})
		}
		live, next := a.live, a.after
		if live != nil {
			live = normalized(live)
		}
		next = normalized(next)
		if live != nil && live.GetKind() == "Secret" {
			redactSecrets(live, next)
		} else if next.GetKind() == "Secret" {
			redactSecrets(nil, next)
		}
		if live != nil {
			before = append(before, live)
		}
		after = append(after, next)
	}
	for _, p := range prune {
		report.Prune = append(report.Prune, refOf(p))
		p = normalized(p)
		if p.GetKind() == "Secret" {
			redactSecrets(p, nil)
		}
		before = append(before, p)
	}
	slices.SortFunc(report.Prune, compareRefs)
	slices.SortFunc(report.Rejected, func(a, b Rejection) int { return compareRefs(a.Ref, b.Ref) })
	cfg := res.Config
	beforeSide, beforeByLine, err := side(before, clusterSource, cfg)
	if err != nil {
		return nil, err
	}
	afterSide, afterByLine, err := side(after, buildSource, cfg)
	if err != nil {
		return nil, err
	}
	report.Report = diff.Compare(beforeSide, afterSide)
	var unit *model.Set
	if len(res.Units) == 1 {
		unit = res.Units[0].Set
	}
	relocate(report.Report, unit, beforeByLine, afterByLine)
	return report, nil
}

// Synthetic names of the two sides' streams, which relocate replaces.
const (
	clusterSource = "(cluster)"
	buildSource   = "(build)"
)

func compareRefs(a, b Ref) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Group, b.Group), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
}

func refOf(u *unstructured.Unstructured) Ref {
	return Ref{Group: groupOf(u.GetAPIVersion()), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

// resourceFor is the client of o's resource, and whether the cluster
// serves its kind.
func resourceFor(ctx context.Context, c *Cluster, gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, bool, error) {
	m, err := c.Mapper.RESTMapping(ctx, gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("finding the resource of %s: %w", gvk, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.Dynamic.Resource(m.Resource).Namespace(namespace), true, nil
	}
	return c.Dynamic.Resource(m.Resource), true, nil
}

// dryRun reads o live and server-side applies it with dryRun=All. An
// object the API server refuses is compared as built, so that knc's own
// rules (immutable fields) still report on it.
func dryRun(ctx context.Context, c *Cluster, o *unstructured.Unstructured, fieldManager string, crds map[schema.GroupKind]bool) (applied, error) {
	a := applied{built: o, after: o}
	ri, served, err := resourceFor(ctx, c, o.GroupVersionKind(), o.GetNamespace())
	if err != nil {
		return a, err
	}
	if !served {
		if !crds[o.GroupVersionKind().GroupKind()] {
			a.rejected = fmt.Sprintf("the cluster serves no %s, and the build does not define it", o.GroupVersionKind())
		}
		// Its CRD is in the build: it is new with the CRD.
		return a, nil
	}
	live, err := ri.Get(ctx, o.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return a, fmt.Errorf("reading %s: %w", describe(o), err)
	default:
		a.live = live
	}
	got, err := ri.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: fieldManager, Force: true, DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		var status apierrors.APIStatus
		if !errors.As(err, &status) || apierrors.IsUnauthorized(err) || isUnreachable(err) {
			return a, fmt.Errorf("dry run of %s: %w", describe(o), err)
		}
		a.rejected = err.Error()
		if o.GetKind() == "Secret" {
			a.rejected = secretRejection(status.Status())
		}
		return a, nil
	}
	a.after = got
	return a, nil
}

// secretRejection says why the API server refused a Secret without its
// message, which may quote the data: the reason and the fields.
func secretRejection(st metav1.Status) string {
	msg := "refused (" + string(st.Reason) + ")"
	if st.Details != nil {
		var fields []string
		for _, c := range st.Details.Causes {
			fields = append(fields, c.Field+": "+string(c.Type))
		}
		if len(fields) > 0 {
			msg += ": " + strings.Join(fields, "; ")
		}
	}
	return msg + "; the API server's message is not shown, as it may quote the Secret's data"
}

// isUnreachable tells the errors that say nothing of the object.
func isUnreachable(err error) bool {
	return apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err)
}

func describe(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return knative.KindLabel(groupOf(o.GetAPIVersion()), o.GetKind()) + " " + o.GetName()
	}
	return knative.KindLabel(groupOf(o.GetAPIVersion()), o.GetKind()) + " " + o.GetNamespace() + "/" + o.GetName()
}

// normalized is o without what the API server keeps about it rather than
// what was applied: status, managedFields, versions and times.
func normalized(o *unstructured.Unstructured) *unstructured.Unstructured {
	o = o.DeepCopy()
	delete(o.Object, "status")
	for _, f := range []string{"managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink"} {
		unstructured.RemoveNestedField(o.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(o.Object, "metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration")
	if a, ok, _ := unstructured.NestedMap(o.Object, "metadata", "annotations"); ok && len(a) == 0 {
		unstructured.RemoveNestedField(o.Object, "metadata", "annotations")
	}
	return o
}

// redactSecrets replaces the values of a Secret's data on both sides: a
// value the same on both reads "(redacted)", one that changes
// "(redacted, changed)" after, so that the report says a secret changes
// without saying what it is.
func redactSecrets(before, after *unstructured.Unstructured) {
	values := func(o *unstructured.Unstructured) map[string]any {
		if o == nil {
			return nil
		}
		out := map[string]any{}
		data, _, _ := unstructured.NestedMap(o.Object, "data")
		for k, v := range data {
			out[k] = v
		}
		// stringData is what the API server merges into data, encoded:
		// it is compared in that form.
		plain, _, _ := unstructured.NestedMap(o.Object, "stringData")
		for k, v := range plain {
			if s, ok := v.(string); ok {
				v = base64.StdEncoding.EncodeToString([]byte(s))
			}
			out[k] = v
		}
		delete(o.Object, "data")
		delete(o.Object, "stringData")
		return out
	}
	old, next := values(before), values(after)
	const same, changed = "(redacted)", "(redacted, changed)"
	if before != nil && len(old) > 0 {
		red := map[string]any{}
		for k := range old {
			red[k] = same
		}
		before.Object["data"] = red
	}
	if after != nil && len(next) > 0 {
		red := map[string]any{}
		for k, v := range next {
			red[k] = same
			if ov, ok := old[k]; before != nil && (!ok || ov != v) {
				red[k] = changed
			}
		}
		after.Object["data"] = red
	}
}

// side checks objs as the manifests are checked, and compiles their
// routes, for package diff; byLine maps the line each object starts at
// in the stream to the object.
func side(objs []*unstructured.Unstructured, name string, cfg *project.Config) (diff.Side, []lineEntry, error) {
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int { return compareRefs(refOf(a), refOf(b)) })
	var buf bytes.Buffer
	for _, o := range objs {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return diff.Side{}, nil, err
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	loaded, err := load.Read([]load.Source{{Name: name, Data: buf.Bytes()}}, cuelimit.Limits{}, nil)
	if err != nil {
		return diff.Side{}, nil, fmt.Errorf("reading the objects of the %s: %w", name, err)
	}
	// What the checks say of the live objects is knc validate's
	// business; the diff compares what the cluster holds, however it
	// checks.
	set, _ := check.Check(loaded.Docs, cfg)
	table, _ := routes.Compile(set, cfg)
	var byLine []lineEntry
	for _, e := range set.Entries {
		byLine = append(byLine, lineEntry{line: e.Doc.PosOf("").Line, entry: e})
	}
	slices.SortFunc(byLine, func(a, b lineEntry) int { return cmp.Compare(a.line, b.line) })
	return diff.Side{Set: set, Config: cfg, Table: table}, byLine, nil
}

type lineEntry struct {
	line  int
	entry *model.Entry
}
