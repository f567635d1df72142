package kustomize

import (
	"bytes"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/internal/inputfs"
)

// knc renders the kustomizations that most GitOps repositories hold itself,
// and leaves the rest to krusty. kustomize checks each resource it adds
// against all those before it, and keeps global state that allows one
// build at a time; a repository of many overlays pays for both. The subset
// knc renders is small enough to follow kustomize exactly:
//
//   - resources that are YAML files or directories holding a kustomization;
//   - namespace, on kinds that kustomize deems namespaced without asking
//     its OpenAPI schema;
//   - strategic-merge patches from files, each aimed by its own kind and
//     name, or by a target without label selectors, at one object of a
//     kind kustomize has no schema for: maps merge, lists are replaced,
//     null deletes and $patch: delete removes.
//   - labels, commonLabels and commonAnnotations, when they write an
//     object's metadata, and the selector of a Service: no object is of
//     another kind whose selectors or templates kustomize's field specs
//     name (fastmeta.go);
//   - images, with name, newName, newTag, digest and tagSuffix, in
//     containers and initContainers lists anywhere and the image fields
//     kustomize's field specs name, when the fields on the way have the
//     shape kustomize expects (fastimages.go).
//
// Anything else, and anything that would be a kustomize error, makes the
// whole kustomization fall back to krusty, whose output and errors stay
// the reference: a differential test holds the two to the same result.

// fastObject is an object being rendered, and what kustomize would know
// of its identity.
type fastObject struct {
	node *yaml.Node
	// origin is the absolute path of the object's resource file.
	origin                                 string
	apiVersion, group, version, kind, name string
	// namespace is metadata.namespace now; pastNamespaces the effective
	// namespaces it had before each namespace transformation, which a
	// patch may still name it by.
	namespace      string
	pastNamespaces []string
}

// fastBuilder renders a tree of kustomizations, or says that krusty must.
type fastBuilder struct {
	fs       inputfs.FS
	root     string // resolved
	sources  *sourceCache
	read     map[string]bool
	building map[string]bool
}

// renderFast renders the kustomization in absDir, and reports false when
// the kustomization, or one it includes, is outside the subset.
func renderFast(absDir, root string, sources *sourceCache) (objs []*fastObject, read []string, ok bool) {
	resolvedRoot, err := sources.fs.EvalSymlinks(root)
	if err != nil {
		return nil, nil, false
	}
	b := &fastBuilder{fs: sources.fs, root: resolvedRoot, sources: sources, read: map[string]bool{}, building: map[string]bool{}}
	objs, ok = b.build(absDir)
	if !ok {
		return nil, nil, false
	}
	for f := range b.read {
		read = append(read, f)
	}
	slices.Sort(read)
	return objs, read, true
}

// kustomizationFields are the fields of a kustomization in the subset.
var kustomizationFields = []string{"apiVersion", "kind", "resources", "namespace", "patches", "patchesStrategicMerge", "labels", "commonLabels", "commonAnnotations", "images"}

// dnsLabel is what a namespace must look like to be set as is.
var dnsLabel = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$`)

// fastKustomization is a kustomization file within the subset.
type fastKustomization struct {
	resources []string
	patches   []fastPatch
	namespace string
	// strategicMerge says that the patches are patchesStrategicMerge,
	// which kustomize applies through a copy of each patch with its
	// metadata rewritten; it applies those of patches as they are.
	strategicMerge bool
	// labels are the label transformers, in kustomize's order: those of
	// labels, then commonLabels.
	labels      []fastLabels
	annotations map[string]string
	images      []fastImage
}

// fastPatch is a patch file, and the selector of its target when the
// kustomization gives one rather than leaving the patch to name it.
type fastPatch struct {
	path   string
	target *types.Selector
}

// local checks a path of the tree: inside the root, free of symbolic
// links.
func (b *fastBuilder) local(path string) bool {
	if path != b.root && !strings.HasPrefix(path, b.root+string(filepath.Separator)) {
		return false
	}
	resolved, err := b.fs.EvalSymlinks(path)
	return err == nil && resolved == path
}

// entryPath resolves an entry of a kustomization, relative to its
// directory.
func (b *fastBuilder) entryPath(dir, entry string) (string, bool) {
	if entry == "" || filepath.IsAbs(entry) || strings.ContainsAny(entry, "?:@\\*[]{}\n") {
		return "", false
	}
	path := filepath.Join(dir, entry)
	return path, b.local(path)
}

func (b *fastBuilder) kustomization(dir string) (*fastKustomization, bool) {
	var found []string
	for _, name := range load.KustomizationFileNames {
		if _, err := b.fs.Lstat(filepath.Join(dir, name)); err == nil {
			found = append(found, filepath.Join(dir, name))
		}
	}
	if len(found) != 1 || !b.local(found[0]) {
		return nil, false
	}
	data, err := b.fs.ReadFile(found[0], load.MaxFileBytes)
	if err != nil || bytes.Contains(data, []byte("\n---")) || bytes.HasPrefix(data, []byte("---")) {
		return nil, false
	}
	b.read[found[0]] = true
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, false
	}
	k := &fastKustomization{}
	m := doc.Content[0]
	seen := map[string]bool{}
	var common *fastLabels
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, value := m.Content[i].Value, m.Content[i+1]
		if seen[key] || !slices.Contains(kustomizationFields, key) {
			return nil, false
		}
		seen[key] = true
		switch key {
		case "apiVersion":
			if !isString(value) || value.Value != "kustomize.config.k8s.io/v1beta1" {
				return nil, false
			}
		case "kind":
			if !isString(value) || value.Value != "Kustomization" {
				return nil, false
			}
		case "namespace":
			if !isString(value) || !dnsLabel.MatchString(value.Value) || kyaml.IsValueNonString(value.Value) {
				return nil, false
			}
			k.namespace = value.Value
		case "resources", "patchesStrategicMerge":
			list, ok := stringList(value)
			if !ok {
				return nil, false
			}
			if key == "resources" {
				k.resources = list
				break
			}
			k.strategicMerge = true
			for _, path := range list {
				k.patches = append(k.patches, fastPatch{path: path})
			}
		case "patches":
			patches, ok := sequence(value, patchEntry)
			if !ok {
				return nil, false
			}
			k.patches = append(k.patches, patches...)
		case "labels":
			labels, ok := sequence(value, labelEntry)
			if !ok {
				return nil, false
			}
			k.labels = append(k.labels, labels...)
		case "commonLabels", "commonAnnotations":
			pairs, ok := stringMap(value)
			if !ok {
				return nil, false
			}
			if key == "commonAnnotations" {
				k.annotations = pairs
				break
			}
			common = &fastLabels{pairs: pairs, selectors: true}
		case "images":
			images, ok := sequence(value, imageEntry)
			if !ok {
				return nil, false
			}
			k.images = append(k.images, images...)
		}
	}
	if common != nil {
		k.labels = append(k.labels, *common)
	}
	// patchesStrategicMerge is applied before patches, whatever the order
	// of the fields.
	if seen["patches"] && seen["patchesStrategicMerge"] {
		return nil, false
	}
	return k, true
}

// patchEntry reads an entry of patches: a path, and a target that selects
// by kind, name, group, version and namespace at most.
func patchEntry(p *yaml.Node) (fastPatch, bool) {
	var patch fastPatch
	if p.Kind != yaml.MappingNode {
		return patch, false
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(p.Content); i += 2 {
		key, value := p.Content[i].Value, p.Content[i+1]
		if seen[key] {
			return patch, false
		}
		seen[key] = true
		switch key {
		case "path":
			if !isString(value) {
				return patch, false
			}
			patch.path = value.Value
		case "target":
			if value.Kind != yaml.MappingNode {
				return patch, false
			}
			patch.target = &types.Selector{}
			fields := map[string]*string{
				"group": &patch.target.Group, "version": &patch.target.Version, "kind": &patch.target.Kind,
				"name": &patch.target.Name, "namespace": &patch.target.Namespace,
			}
			for j := 0; j+1 < len(value.Content); j += 2 {
				field, ok := fields[value.Content[j].Value]
				if !ok || *field != "" || !isString(value.Content[j+1]) {
					return patch, false
				}
				*field = value.Content[j+1].Value
			}
		default:
			return patch, false
		}
	}
	return patch, patch.path != ""
}

func isString(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!str" && n.Value != ""
}

func stringList(n *yaml.Node) ([]string, bool) {
	return sequence(n, func(item *yaml.Node) (string, bool) {
		return item.Value, isString(item)
	})
}

// sequence reads each item of a sequence with entry, and reports false
// when n is not a sequence or entry refuses an item.
func sequence[T any](n *yaml.Node, entry func(*yaml.Node) (T, bool)) ([]T, bool) {
	if n.Kind != yaml.SequenceNode {
		return nil, false
	}
	out := make([]T, len(n.Content))
	for i, item := range n.Content {
		var ok bool
		if out[i], ok = entry(item); !ok {
			return nil, false
		}
	}
	return out, true
}

// build renders the kustomization in dir as kustomize does: its resources
// in order, then its builtin transformers in krusty's order (kusttarget's
// configureBuiltinTransformers): patches, namespace, labels, annotations,
// images.
func (b *fastBuilder) build(dir string) ([]*fastObject, bool) {
	if b.building[dir] || !b.local(dir) {
		return nil, false
	}
	b.building[dir] = true
	defer delete(b.building, dir)
	k, ok := b.kustomization(dir)
	if !ok {
		return nil, false
	}
	var objs []*fastObject
	for _, entry := range k.resources {
		path, ok := b.entryPath(dir, entry)
		if !ok {
			return nil, false
		}
		info, err := b.fs.Stat(path)
		switch {
		case err != nil:
			return nil, false
		case info.IsDir():
			sub, ok := b.build(path)
			if !ok {
				return nil, false
			}
			objs = append(objs, sub...)
		default:
			docs, ok := b.file(path)
			if !ok {
				return nil, false
			}
			for _, d := range docs {
				o, ok := newFastObject(d, path)
				if !ok {
					return nil, false
				}
				objs = append(objs, o)
			}
		}
	}
	if !unique(objs) {
		return nil, false
	}
	for _, patch := range k.patches {
		path, ok := b.entryPath(dir, patch.path)
		if !ok {
			return nil, false
		}
		docs, ok := b.file(path)
		if !ok || len(docs) == 0 || patch.target != nil && len(docs) > 1 {
			return nil, false
		}
		for _, d := range docs {
			if objs, ok = applyPatch(objs, d, patch.target, k.strategicMerge); !ok {
				return nil, false
			}
		}
	}
	if k.namespace != "" {
		for _, o := range objs {
			if !o.setNamespace(k.namespace) {
				return nil, false
			}
		}
		if !unique(objs) {
			return nil, false
		}
	}
	for _, l := range k.labels {
		if !setLabels(objs, l) {
			return nil, false
		}
	}
	if !setAnnotations(objs, k.annotations) {
		return nil, false
	}
	if !setImages(objs, k.images) {
		return nil, false
	}
	return objs, true
}

// file reads a resource or patch file, and reports false for one that
// knc's loader and kustomize's might read differently.
func (b *fastBuilder) file(path string) ([]*load.Document, bool) {
	if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
		return nil, false
	}
	b.read[path] = true
	s := b.sources.get(path)
	if s.err != nil || len(s.diags) > 0 || len(s.skipped) > 0 || !plainStream(s.data) {
		return nil, false
	}
	return s.docs, true
}

// plainStream reports whether a YAML stream uses none of what kustomize's
// reader treats differently from knc's: directives, document end markers,
// content on a document start line, byte order marks, merge keys,
// carriage returns, lists
// of objects (kustomize expands every kind named *List, knc only v1
// List; the check is by the word alone) and kustomize's own kinds.
func plainStream(data []byte) bool {
	if bytes.HasPrefix(data, []byte{0xef}) || bytes.HasPrefix(data, []byte{0xfe}) || bytes.HasPrefix(data, []byte{0xff}) ||
		bytes.ContainsAny(data, "\r") || bytes.Contains(data, []byte("<<")) || bytes.Contains(data, []byte("List")) ||
		bytes.Contains(data, []byte("config.k8s.io")) || bytes.Contains(data, []byte("config.kubernetes.io")) {
		return false
	}
	for line := range bytes.Lines(data) {
		switch {
		case bytes.HasPrefix(line, []byte("%")), bytes.HasPrefix(line, []byte("...")):
			return false
		case bytes.HasPrefix(line, []byte("---")):
			if rest := bytes.TrimSpace(line[3:]); len(rest) > 0 {
				return false
			}
		}
	}
	return true
}

// newFastObject checks that a document is an object kustomize reads as
// knc does, and copies its node to be rendered.
func newFastObject(d *load.Document, origin string) (*fastObject, bool) {
	n := d.Node()
	if n.Kind != yaml.MappingNode {
		return nil, false
	}
	av, kind := mapValue(n, "apiVersion"), mapValue(n, "kind")
	md := mapValue(n, "metadata")
	if av == nil || kind == nil || md == nil || !isString(av) || !isString(kind) || md.Kind != yaml.MappingNode {
		return nil, false
	}
	name, ns := mapValue(md, "name"), mapValue(md, "namespace")
	if name == nil || !isString(name) || ns != nil && !isString(ns) {
		return nil, false
	}
	for _, field := range []string{"labels", "annotations"} {
		if m := mapValue(md, field); m != nil && !scalarMap(m) {
			return nil, false
		}
	}
	node, ok := plainCopy(n)
	if !ok {
		return nil, false
	}
	o := &fastObject{node: node, origin: origin, apiVersion: av.Value, kind: kind.Value, name: name.Value}
	if ns != nil {
		o.namespace = ns.Value
	}
	o.group, o.version, _ = strings.Cut(av.Value, "/")
	if o.version == "" {
		o.group, o.version = "", o.group
	}
	return o, true
}

func scalarMap(m *yaml.Node) bool {
	if m.Kind != yaml.MappingNode {
		return false
	}
	for _, c := range m.Content {
		if c.Kind != yaml.ScalarNode || c.Tag == "!!null" {
			return false
		}
	}
	return true
}

// mapValue is the value mapEntry finds.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	_, v := mapEntry(n, key)
	return v
}

// plainCopy copies a tree that has no anchors or aliases, which kustomize
// resolves differently, and reports false for one that has. The copy's
// nodes, and their Content slices, are allocated together.
func plainCopy(n *yaml.Node) (*yaml.Node, bool) {
	count, ok := countPlain(n)
	if !ok {
		return nil, false
	}
	c := &slabCopier{nodes: make([]yaml.Node, count), content: make([]*yaml.Node, count)}
	return c.copy(n), true
}

func countPlain(n *yaml.Node) (int, bool) {
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return 0, false
	}
	count := 1
	for _, child := range n.Content {
		k, ok := countPlain(child)
		if !ok {
			return 0, false
		}
		count += k
	}
	return count, true
}

type slabCopier struct {
	nodes   []yaml.Node
	content []*yaml.Node
}

func (c *slabCopier) copy(n *yaml.Node) *yaml.Node {
	out := &c.nodes[0]
	c.nodes = c.nodes[1:]
	*out = *n
	if n.Content != nil {
		// A full slice expression, so that appending to the copy's
		// Content never writes over its neighbours'.
		out.Content = c.content[:len(n.Content):len(n.Content)]
		c.content = c.content[len(n.Content):]
		for i, child := range n.Content {
			out.Content[i] = c.copy(child)
		}
	}
	return out
}

// custom reports whether kustomize knows nothing of the object's kind: its
// group is not one of Kubernetes' own. kustomize then takes it to be
// namespaced, and merges patches to it without a schema.
func (o *fastObject) custom() bool {
	return strings.Contains(o.group, ".") && !strings.HasSuffix(o.group, ".k8s.io")
}

// namespacedBuiltins are Kubernetes kinds that are namespaced and that
// kustomize's namespace transformer changes only in metadata.namespace.
var namespacedBuiltins = map[string][]string{
	"v1":                           {"ConfigMap", "Endpoints", "LimitRange", "PersistentVolumeClaim", "Pod", "ResourceQuota", "Secret", "Service", "ServiceAccount"},
	"apps/v1":                      {"DaemonSet", "Deployment", "ReplicaSet", "StatefulSet"},
	"batch/v1":                     {"CronJob", "Job"},
	"networking.k8s.io/v1":         {"Ingress", "NetworkPolicy"},
	"policy/v1":                    {"PodDisruptionBudget"},
	"autoscaling/v2":               {"HorizontalPodAutoscaler"},
	"rbac.authorization.k8s.io/v1": {"Role"},
}

func (o *fastObject) namespaced() bool {
	return o.custom() || slices.Contains(namespacedBuiltins[o.apiVersion], o.kind)
}

// effectiveNamespace is the namespace kustomize compares ids by.
func effectiveNamespace(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

// unique reports whether no two objects share an id, which kustomize
// refuses.
func unique(objs []*fastObject) bool {
	type id struct{ group, version, kind, name, namespace string }
	seen := make(map[id]bool, len(objs))
	for _, o := range objs {
		if !o.namespaced() {
			return false
		}
		k := id{o.group, o.version, o.kind, o.name, effectiveNamespace(o.namespace)}
		if seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

// setNamespace sets metadata.namespace as kustomize's namespace
// transformer does.
func (o *fastObject) setNamespace(ns string) bool {
	if !o.namespaced() {
		return false
	}
	o.pastNamespaces = append(o.pastNamespaces, effectiveNamespace(o.namespace))
	// kyaml replaces the value node's content, keeping its style, or
	// appends a field; ns needs no quotes, as the kustomization was read.
	md := mapValue(o.node, "metadata")
	if v := mapValue(md, "namespace"); v != nil {
		*v = yaml.Node{Kind: yaml.ScalarNode, Tag: kyaml.NodeTagString, Value: ns, Style: v.Style}
	} else {
		md.Content = append(md.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "namespace"}, &yaml.Node{Kind: yaml.ScalarNode, Tag: kyaml.NodeTagString, Value: ns})
	}
	o.namespace = ns
	return true
}

// applyPatch applies a strategic-merge patch to the one object that the
// selector, or else the patch itself, names, as kustomize's patch
// transformers do. Through a selector, or for patchesStrategicMerge
// (strategicMerge), kustomize merges a copy of the patch whose metadata
// it rewrote; else the patch as it is.
func applyPatch(objs []*fastObject, d *load.Document, selector *types.Selector, strategicMerge bool) ([]*fastObject, bool) {
	p, ok := newFastObject(d, "")
	if !ok || !cleanPatch(p.node, true) {
		return nil, false
	}
	var target int
	if selector != nil {
		target, ok = selected(objs, selector)
	} else {
		target, ok = named(objs, p)
	}
	if !ok {
		return nil, false
	}
	// The target's kind decides whether kustomize merges by a schema;
	// the patch's own kind becomes the target's before the merge.
	o := objs[target]
	if !o.custom() {
		return nil, false
	}
	viaCopy := strategicMerge || selector != nil
	if !schemaFreeComments(o.node) || !schemaFreeComments(p.node) {
		return nil, false
	}
	if viaCopy {
		// What kustomize does to its copy of the patch before merging.
		patch := kyaml.NewRNode(p.node)
		orig := &resource.Resource{RNode: *kyaml.NewRNode(d.Node())}
		if err := (&resource.Resource{RNode: *patch}).CopyMergeMetaDataFieldsFrom(orig); err != nil {
			return nil, false
		}
		patch.SetKind(o.kind)
		patch.SetApiVersion(o.apiVersion)
		patch.SetKind(p.kind)
	}

	m := &merger{ok: true}
	m.comments(o.node, p.node)
	switch m.directive(p.node) {
	case "delete":
		if !m.ok {
			return nil, false
		}
		return slices.Delete(objs, target, target+1), true
	case "":
		m.fields(o.node, p.node)
	default:
		return nil, false
	}
	if !m.ok {
		return nil, false
	}
	rn := kyaml.NewRNode(o.node)
	rn.SetKind(o.kind)
	if rn.SetName(o.name) != nil || rn.SetNamespace(o.namespace) != nil {
		return nil, false
	}
	return objs, true
}

// named finds the one object that has the patch's group, version, kind
// and name, and its namespace now or before a namespace transformation.
func named(objs []*fastObject, p *fastObject) (int, bool) {
	target := -1
	pns := effectiveNamespace(p.namespace)
	for i, o := range objs {
		if o.group != p.group || o.version != p.version || o.kind != p.kind || o.name != p.name {
			continue
		}
		if effectiveNamespace(o.namespace) != pns && !slices.Contains(o.pastNamespaces, pns) {
			continue
		}
		if target >= 0 {
			return 0, false
		}
		target = i
	}
	return target, target >= 0
}

// selected finds the one object a patch's target selects, matching as
// kustomize does: patterns anchored at both ends, the namespace and name
// it has now or had first.
func selected(objs []*fastObject, s *types.Selector) (int, bool) {
	sr, err := types.NewSelectorRegex(s)
	if err != nil {
		return 0, false
	}
	target := -1
	for i, o := range objs {
		first := effectiveNamespace(o.namespace)
		if len(o.pastNamespaces) > 0 {
			first = o.pastNamespaces[0]
		}
		if !sr.MatchNamespace(first) && !sr.MatchNamespace(effectiveNamespace(o.namespace)) ||
			!sr.MatchName(o.name) || !sr.MatchGvk(resid.Gvk{Group: o.group, Version: o.version, Kind: o.kind}) {
			continue
		}
		if target >= 0 {
			return 0, false
		}
		target = i
	}
	return target, target >= 0
}

// cleanPatch reports whether a patch uses no directive other than $patch
// on a map, and no $patch inside a list.
func cleanPatch(n *yaml.Node, mapsAllowed bool) bool {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if strings.HasPrefix(k, "$") && (k != "$patch" || !mapsAllowed) {
				return false
			}
			if !cleanPatch(n.Content[i+1], mapsAllowed) {
				return false
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if !cleanPatch(c, false) {
				return false
			}
		}
	}
	return true
}

// schemaFreeComments reports that no comment may be read by kyaml as a
// field's schema.
func schemaFreeComments(n *yaml.Node) bool {
	for _, c := range []string{n.HeadComment, n.LineComment} {
		if strings.ContainsAny(c, "{$") {
			return false
		}
	}
	for _, c := range n.Content {
		if !schemaFreeComments(c) {
			return false
		}
	}
	return true
}
