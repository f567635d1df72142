package check

import (
	"strings"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/internal/parallel"
	"github.com/knc-dev/knc/internal/routing"
)

// Check validates docs and returns the model. The set is returned even when
// there are diagnostics, holding what could be decoded, so that tools can
// still show what they understood.
func Check(docs []*load.Document, cfg *project.Config) (*model.Set, diag.List) {
	c := &checker{cfg: cfg, features: cfg.EnabledFeatures(), defaults: model.Defaults{Namespace: cfg.DefaultNamespace}}
	entries := make([]*model.Entry, len(docs))
	perDoc := make([]diag.List, len(docs))
	parallel.For(len(docs), func(i int) { entries[i], perDoc[i] = c.object(docs[i]) })

	var diags diag.List
	for _, d := range perDoc {
		diags = append(diags, d...)
	}
	set := &model.Set{Index: make(map[model.Key]*model.Entry, len(entries))}
	for _, e := range entries {
		if e == nil {
			continue
		}
		if first, dup := set.Index[e.Key]; dup {
			diags.Add(e.Doc.PosOf(""), "", "duplicate %s: already defined at %s", e.Key, first.Doc.PosOf(""))
			continue
		}
		set.Index[e.Key] = e
		set.Entries = append(set.Entries, e)
		switch o := e.Object.(type) {
		case *model.Broker:
			set.Brokers = append(set.Brokers, o)
		case *model.Trigger:
			set.Triggers = append(set.Triggers, o)
		case *model.Channel:
			set.Channels = append(set.Channels, o)
		case *model.Subscription:
			set.Subscriptions = append(set.Subscriptions, o)
		case *model.Sequence:
			set.Sequences = append(set.Sequences, o)
		case *model.Parallel:
			set.Parallels = append(set.Parallels, o)
		case model.Source:
			set.Sources = append(set.Sources, o)
		}
		if e.Duck != nil {
			set.Sources = append(set.Sources, e.Duck)
		}
	}
	diags = append(diags, c.references(set)...)
	diags = append(diags, loops(set)...)
	return set, diags
}

type checker struct {
	cfg      *project.Config
	features model.Features
	defaults model.Defaults
}

// object decodes, validates and defaults one document.
func (c *checker) object(doc *load.Document) (*model.Entry, diag.List) {
	var diags diag.List
	group := model.Group(doc.APIVersion)
	if group == project.Group && doc.Kind == project.Kind || group == routing.Group {
		// Another project's config, or a compiled routing table: knc's own
		// files, not manifests.
		return nil, nil
	}
	if path, problem := checkKnativeKind(doc.APIVersion, doc.Kind); problem != "" {
		diags.Add(doc.PosOf(path), path, "%s", problem)
		return nil, diags
	}
	obj := model.New(doc.APIVersion, doc.Kind)
	if obj == nil {
		return c.other(doc)
	}
	diags = load.DecodeManifest(doc, obj)
	if cs, ok := obj.(*model.ContainerSource); ok {
		// The pod template is checked as Kubernetes' own type, read as
		// kubectl sends it.
		cs.Spec.Template = kubectlTemplate(doc)
	}
	ns := doc.Namespace
	if ns == "" {
		ns = c.defaults.Namespace
	}
	decoded := diags
	var validated diag.List
	problems := obj.Validate(c.features, ns)
	if ps, ok := obj.(*model.PingSource); ok {
		problems = append(problems, ps.ValidateDataSize(c.cfg.PingDataMaxSize())...)
	}
	for _, e := range problems {
		if reported(decoded, e.Path) {
			continue
		}
		if e.Warning {
			validated.AddWarning(doc.PosOf(e.Path), e.Path, "%s", e.Message)
		} else {
			validated.Add(doc.PosOf(e.Path), e.Path, "%s", e.Message)
		}
	}
	statusWarnings(validated)
	diags = append(diags, validated...)
	obj.SetDefaults(c.defaults)
	return &model.Entry{Key: model.KeyOf(obj), Doc: doc, Object: obj}, diags
}

// statusWarnings turns what validation finds in an object's status into
// warnings: the API server drops the status of an object it creates, so
// Knative never validates it. Decoding problems in a status stay errors:
// Knative's defaulting webhook decodes the whole object strictly, status
// included, before the API server drops it.
func statusWarnings(diags diag.List) {
	for i, d := range diags {
		if d.Path == "status" || strings.HasPrefix(d.Path, "status.") {
			diags[i].Severity = diag.Warning
		}
	}
}

// reported says whether decoding already reported a problem at path, above
// it, or at a field directly below it. Validation then sees a zero value
// there, and would only repeat the same problem in other words.
func reported(decodeDiags diag.List, path string) bool {
	for _, d := range decodeDiags {
		if d.Path == path || strings.HasPrefix(path, d.Path+".") || strings.HasPrefix(path, d.Path+"[") {
			return true
		}
		if rest, ok := strings.CutPrefix(d.Path, path); ok && len(rest) > 0 && (rest[0] == '.' || rest[0] == '[') && !strings.ContainsAny(rest[1:], ".[") {
			return true
		}
	}
	return false
}

// clusterScoped lists common kinds that have no namespace.
var clusterScoped = map[string]bool{
	"Namespace": true, "ClusterRole": true, "ClusterRoleBinding": true, "CustomResourceDefinition": true,
	"PersistentVolume": true, "StorageClass": true, "PriorityClass": true, "Node": true,
	"MutatingWebhookConfiguration": true, "ValidatingWebhookConfiguration": true, "APIService": true,
}

// other records a non-Knative object as a possible reference target.
func (c *checker) other(doc *load.Document) (*model.Entry, diag.List) {
	var diags diag.List
	if doc.Name == "" {
		diags.Add(doc.PosOf("metadata.name"), "metadata.name", "field is required")
		return nil, diags
	}
	if diags = checkOtherNames(doc); diags.HasErrors() {
		return nil, diags
	}
	ns := doc.Namespace
	if ns == "" && !clusterScoped[doc.Kind] {
		ns = c.defaults.Namespace
	}
	entry := &model.Entry{
		Key: model.Key{Group: model.Group(doc.APIVersion), Kind: doc.Kind, Namespace: ns, Name: doc.Name},
		Doc: doc,
	}
	if c.cfg.IsSource(entry.Key.Group, doc.Kind) {
		var sd diag.List
		entry.Duck, sd = c.duckSource(doc, ns)
		diags = append(diags, sd...)
	}
	return entry, diags
}
