package kustomize

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/internal/cuelimit"
	"github.com/knc-dev/knc/internal/inputfs"
)

// Rendered is a kustomization built.
type Rendered struct {
	// Dir is the kustomization's directory, File its kustomization file,
	// both as the caller named them.
	Dir, File string
	// Docs are the rendered objects, in kustomize's output order.
	Docs []*load.Document
	// Read lists every file the build read, as absolute paths: the
	// kustomization files, resources and patches it includes.
	Read []string
	// Patches are the files among Read that patched an object, named as
	// diagnostics name them.
	Patches []string
	// Diags holds the build's error, at the kustomization file, or its
	// warnings: deprecated fields, and what kustomize said while building.
	Diags diag.List

	// fast says that knc's own renderer built it, rather than krusty.
	fast bool
}

// Options says how to render.
type Options struct {
	// Root is the directory no file may be read from outside of: the top
	// of the repository, as the root of a Flux source.
	Root string
	// RelativeTo names files, in documents and diagnostics, relative to
	// this directory when they lie below it; empty keeps them absolute.
	RelativeTo string
	// CUELimits bound the evaluation of a resource that is a .cue file.
	CUELimits cuelimit.Limits
	// InputBudget counts the files the build reads; nil counts nothing.
	InputBudget *load.InputBudget
	// FS is what the kustomization is read from; nil means the disk.
	FS inputfs.FS
}

// Render builds the kustomization in dir. Problems with the kustomization
// (a missing resource, a patch whose target is missing, a remote base) are
// Diags; the error is for I/O trouble, and for a resource in CUE over
// opts.CUELimits (a *cuelimit.Exceeded).
func Render(dir string, opts Options) (*Rendered, error) {
	return render(dir, opts, true)
}

// render is Render, with knc's own renderer allowed to build the
// kustomization or not.
func render(dir string, opts Options, allowFast bool) (*Rendered, error) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	fsys := inputfs.Or(opts.FS)
	kfile := load.KustomizationFile(fsys, absDir)
	if kfile == "" {
		return nil, fmt.Errorf("%s: no kustomization file (%s)", dir, strings.Join(load.KustomizationFileNames, ", "))
	}
	root := opts.Root
	if root == "" {
		root = absDir
	}
	secure, err := krustyFS(fsys, root)
	if err != nil {
		return nil, err
	}
	rel := func(file string) string {
		if opts.RelativeTo == "" {
			return file
		}
		return diag.RelPath(opts.RelativeTo, file)
	}
	r := &Rendered{Dir: dir, File: rel(kfile)}
	if file, err := remote(fsys, absDir, map[string]bool{}); err != nil {
		r.Diags = append(r.Diags, buildError(fsys, file, rel(file), err))
		return r, nil
	}
	sources := &sourceCache{fs: fsys, relativeTo: opts.RelativeTo, limits: opts.CUELimits, budget: opts.InputBudget, files: map[string]*source{}}
	var objs []renderedObject
	var fast []*fastObject
	if allowFast {
		fast, r.Read, r.fast = renderFast(absDir, root, sources)
	}
	if r.fast {
		nonString := map[string]bool{}
		for _, o := range fast {
			// krusty rewrites the annotations of every object when it
			// removes its own.
			if err := rewriteAnnotations(o.node, nonString); err != nil {
				return nil, err
			}
			objs = append(objs, renderedObject{node: o.node, origin: o.origin, kind: o.kind, name: o.name})
		}
	} else {
		var diags diag.List
		rec := &recordingFS{FileSystem: secure, fs: fsys, target: absDir, budget: opts.InputBudget, name: rel, read: map[string]bool{}}
		// krusty reports a file over the budget as a build error.
		objs, diags = renderKrusty(fsys, rec, absDir, kfile, r)
		if rec.over != nil {
			return nil, rec.over
		}
		if len(diags) > 0 {
			r.Diags = diags
			return r, nil
		}
	}
	if err := r.place(objs, kfile, sources, rel); err != nil {
		return nil, err
	}
	r.Diags = append(r.Diags, deprecationWarnings(fsys, r.Read, rel)...)
	return r, nil
}

// renderedObject is an object as rendered, with the file it came from and
// the kind and name it had there.
type renderedObject struct {
	node       *yaml.Node
	origin     string
	kind, name string
}

// renderKrusty builds the kustomization in absDir with krusty, and records
// the files the build read in r.Read.
func renderKrusty(fsys inputfs.FS, rec *recordingFS, absDir, kfile string, r *Rendered) ([]renderedObject, diag.List) {
	m, output, err := build(rec, absDir, namesSchema(fsys, absDir, map[string]bool{}))
	for f := range rec.read {
		r.Read = append(r.Read, f)
	}
	slices.Sort(r.Read)
	if err != nil {
		return nil, diag.List{buildError(fsys, kfile, r.File, err)}
	}
	// What krusty wrote to stderr or its log, other than the deprecations
	// render reports for either renderer, is a warning of this build.
	for _, line := range output {
		if !deprecation.MatchString(line) {
			r.Diags.AddWarning(diag.Pos{File: r.File, Line: 1, Column: 1}, "", "kustomize: %s", line)
		}
	}
	resources := m.Resources()
	objs := make([]renderedObject, len(resources))
	for i, res := range resources {
		objs[i].origin = kfile
		if o, err := res.GetOrigin(); err == nil && o != nil && o.Repo == "" {
			switch {
			case o.Path != "":
				objs[i].origin = filepath.Join(absDir, o.Path)
			case o.ConfiguredIn != "":
				objs[i].origin = filepath.Join(absDir, o.ConfiguredIn)
			}
		}
		id := res.OrgId()
		objs[i].kind, objs[i].name = id.Kind, id.Name
	}
	if err := m.RemoveOriginAnnotations(); err != nil {
		return nil, diag.List{buildError(fsys, kfile, r.File, err)}
	}
	for i, res := range resources {
		objs[i].node = res.RNode.YNode()
	}
	return objs, nil
}

// source is a file read for its documents.
type source struct {
	data    []byte
	docs    []*load.Document
	diags   diag.List
	skipped []load.Skipped
	err     error
}

// sourceCache reads each file once, for the renderer and for placing the
// rendered objects. stopped is a CUE evaluation over its limits, which
// ends the render.
type sourceCache struct {
	fs         inputfs.FS
	relativeTo string
	limits     cuelimit.Limits
	budget     *load.InputBudget
	files      map[string]*source
	stopped    error
}

func (c *sourceCache) get(file string) *source {
	if s, ok := c.files[file]; ok {
		return s
	}
	s := &source{}
	c.files[file] = s
	if c.stopped != nil {
		s.err = c.stopped
		return s
	}
	if s.err = c.budget.ChargeRegularFile(c.fs, file, c.name(file)); s.err != nil {
		return s
	}
	if s.data, s.err = c.fs.ReadFile(file, load.MaxFileBytes); s.err != nil {
		return s
	}
	name := c.name(file)
	// The renderer reads comments, which the compact form leaves out.
	l, err := load.ReadParsed([]load.Source{{Name: name, Data: s.data}}, c.limits, c.budget)
	switch ex := (*cuelimit.Exceeded)(nil); {
	case err == nil:
		s.docs, s.diags, s.skipped = l.Docs, l.Diags, l.Skipped
	case errors.As(err, &ex):
		c.stopped, s.err = err, err
	default:
		s.err = err
	}
	return s
}

// name is how documents and messages name file.
func (c *sourceCache) name(file string) string {
	if c.relativeTo == "" {
		return file
	}
	return diag.RelPath(c.relativeTo, file)
}

// place turns the rendered objects into r.Docs, each node placed where it
// came from: the object's own file, a patch, or the kustomization file.
func (r *Rendered) place(objs []renderedObject, kfile string, sources *sourceCache, rel func(string) string) error {
	isOrigin := map[string]bool{}
	for _, o := range objs {
		isOrigin[o.origin] = true
	}
	// The files read that are neither kustomization files nor the origin
	// of an object are patches (or transformer configurations).
	var patchDocs []*load.Document
	for _, f := range r.Read {
		if isOrigin[f] || slices.Contains(load.KustomizationFileNames, filepath.Base(f)) {
			continue
		}
		patchDocs = append(patchDocs, sources.get(f).docs...)
	}
	kustText, _ := sources.fs.ReadFile(kfile, load.MaxFileBytes)
	patched := map[string]bool{}
	for _, o := range objs {
		var src *load.Document
		for _, d := range sources.get(o.origin).docs {
			if d.Kind == o.kind && d.Name == o.name {
				src = d
				break
			}
		}
		doc := load.NewDocument(rel(o.origin), o.node)
		var patches []*load.Document
		for _, p := range patchDocs {
			if p.Kind == o.kind && p.Name == o.name {
				patches = append(patches, p)
			}
		}
		mp := mapper{doc: doc, kustFile: r.File, kustText: kustText, patched: patched}
		var srcRoot *yaml.Node
		if src != nil {
			doc.Index = src.Index
			srcRoot = src.Node()
		}
		patchRoots := make([]patchNode, len(patches))
		for j, p := range patches {
			patchRoots[j] = patchNode{file: p.File, node: p.Node()}
		}
		mp.walk(o.node, srcRoot, patchRoots, nil)
		r.Docs = append(r.Docs, doc)
	}
	if sources.stopped != nil {
		return sources.stopped
	}
	for f := range patched {
		r.Patches = append(r.Patches, f)
	}
	slices.Sort(r.Patches)
	return nil
}

// buildError is a kustomize error, placed on the line of the kustomization
// file that names what the error is about, when one does.
func buildError(fsys inputfs.FS, kfile, name string, err error) diag.Diagnostic {
	msg := err.Error()
	pos := diag.Pos{File: name, Line: 1, Column: 1}
	if text, rerr := fsys.ReadFile(kfile, load.MaxFileBytes); rerr == nil {
		for i, line := range strings.Split(string(text), "\n") {
			entry := strings.TrimSpace(line)
			entry = strings.TrimPrefix(entry, "- ")
			entry = strings.TrimPrefix(entry, "path: ")
			entry = strings.Trim(strings.TrimSpace(entry), `"'`)
			if len(entry) > 2 && !strings.HasSuffix(entry, ":") && strings.Contains(msg, entry) {
				pos.Line, pos.Column = i+1, strings.Index(line, entry)+1
				break
			}
		}
	}
	if _, ok := err.(remoteError); ok {
		return diag.Diagnostic{Pos: pos, Message: msg}
	}
	return diag.Diagnostic{Pos: pos, Message: "kustomize build failed: " + msg}
}

type patchNode struct {
	file string
	node *yaml.Node
}

// mapper gives the nodes of a rendered object the positions of the nodes
// they came from.
type mapper struct {
	doc      *load.Document
	kustFile string
	kustText []byte
	patched  map[string]bool
}

// walk maps n, the rendered node, given the node at the same path in the
// source object (or nil) and in the patches for the object. parent is the
// rendered node's parent, already mapped.
func (m *mapper) walk(n, src *yaml.Node, patches []patchNode, parent *yaml.Node) {
	// kustomize leaves the tags of nodes it merged unresolved; later
	// stages read the resolved ones, as a parser gives them.
	n.Tag = n.ShortTag()
	m.place(n, src, patches, parent)
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			sk, sv := mapEntry(src, k.Value)
			var pk, pv []patchNode
			for _, p := range patches {
				if kk, vv := mapEntry(p.node, k.Value); kk != nil {
					pk = append(pk, patchNode{p.file, kk})
					pv = append(pv, patchNode{p.file, vv})
				}
			}
			k.Tag = k.ShortTag()
			m.place(k, sk, pk, n)
			m.walk(v, sv, pv, k)
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			var si *yaml.Node
			if src != nil && src.Kind == yaml.SequenceNode && i < len(src.Content) {
				si = src.Content[i]
			}
			var pi []patchNode
			for _, p := range patches {
				if p.node.Kind == yaml.SequenceNode && i < len(p.node.Content) {
					pi = append(pi, patchNode{p.file, p.node.Content[i]})
				}
			}
			m.walk(item, si, pi, n)
		}
	}
}

// place sets n's position: the source's when the source holds the same
// value there, else a patch's when the last patch holding the path set
// this value, else the line of the kustomization file that holds a scalar
// value a transformer set, else the parent's.
func (m *mapper) place(n, src *yaml.Node, patches []patchNode, parent *yaml.Node) {
	if src != nil && (n.Kind != yaml.ScalarNode || src.Kind == yaml.ScalarNode && src.Value == n.Value) {
		n.Line, n.Column = src.Line, src.Column
		return
	}
	for i := len(patches) - 1; i >= 0; i-- {
		p := patches[i]
		if n.Kind == yaml.ScalarNode && (p.node.Kind != yaml.ScalarNode || p.node.Value != n.Value) {
			continue
		}
		n.Line, n.Column = p.node.Line, p.node.Column
		m.doc.SetNodeFile(n, p.file)
		m.patched[p.file] = true
		return
	}
	if n.Kind == yaml.ScalarNode && n.Value != "" {
		if line, col := findValue(m.kustText, n.Value); line > 0 {
			n.Line, n.Column = line, col
			m.doc.SetNodeFile(n, m.kustFile)
			return
		}
	}
	if parent != nil {
		p := m.doc.Pos(parent)
		n.Line, n.Column = p.Line, p.Column
		if p.File != m.doc.File {
			m.doc.SetNodeFile(n, p.File)
		}
		return
	}
	n.Line, n.Column = 1, 1
	m.doc.SetNodeFile(n, m.kustFile)
}

func mapEntry(n *yaml.Node, key string) (k, v *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// findValue finds the line of text that holds value after a colon or a
// list dash, as a YAML scalar would be written.
func findValue(text []byte, value string) (line, col int) {
	for i, l := range bytes.Split(text, []byte("\n")) {
		at := bytes.Index(l, []byte(value))
		if at <= 0 {
			continue
		}
		before := bytes.TrimRight(l[:at], `"' `)
		if bytes.HasSuffix(before, []byte(":")) || bytes.HasSuffix(before, []byte("-")) {
			after := bytes.TrimLeft(l[at+len(value):], `"' `)
			if len(after) == 0 || after[0] == '#' {
				return i + 1, at + 1
			}
		}
	}
	return 0, 0
}

// recordingFS records the files a build reads, counts them against the
// input budget, and asks kustomize for origin annotations on the
// kustomization being built.
type recordingFS struct {
	filesys.FileSystem
	fs     inputfs.FS
	target string
	budget *load.InputBudget
	// name is how messages name a file.
	name func(string) string
	mu   sync.Mutex
	read map[string]bool
	// over is the error of the file that took the budget over its
	// limit; kustomize would report it as a build error.
	over error
}

func (f *recordingFS) ReadFile(path string) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := f.budget.ChargeRegularFile(f.fs, abs, f.name(abs)); err != nil {
		f.mu.Lock()
		f.over = cmp.Or(f.over, err)
		f.mu.Unlock()
		return nil, err
	}
	data, err := f.FileSystem.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.read[abs] = true
	f.mu.Unlock()
	if !slices.Contains(load.KustomizationFileNames, filepath.Base(abs)) {
		return data, nil
	}
	if filepath.Dir(abs) == f.target {
		return withOriginAnnotations(data)
	}
	return data, nil
}

// remoteError is a remote base or component, which knc does not fetch.
type remoteError string

func (e remoteError) Error() string {
	return fmt.Sprintf("%q is not a path in the repository: knc renders kustomizations offline, so vendor remote bases into the repository", string(e))
}

// remote finds a remote base or component named by the kustomization in
// dir or one it includes, before kustomize would clone it; it returns the
// kustomization file that names it.
func remote(fsys inputfs.FS, dir string, seen map[string]bool) (string, error) {
	if seen[dir] {
		return "", nil
	}
	seen[dir] = true
	k, kfile, err := readKustomization(fsys, dir)
	if err != nil {
		return "", nil // kustomize reports it, in its words
	}
	//lint:ignore SA1019 kustomize still builds the bases of old kustomizations, so knc reads them too
	for _, list := range [][]string{k.Resources, k.Components, k.Bases} {
		for _, entry := range list {
			if !isLocalRelativePath(entry) || strings.Contains(entry, "?ref=") {
				return kfile, remoteError(entry)
			}
		}
	}
	for _, sub := range includes(fsys, dir, k) {
		if file, err := remote(fsys, sub, seen); err != nil {
			return file, err
		}
	}
	return "", nil
}

// withOriginAnnotations adds originAnnotations to the kustomization's
// buildMetadata, so that each rendered object says which file it came
// from.
func withOriginAnnotations(data []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return data, nil // kustomize reports it, in its words
	}
	m := doc.Content[0]
	_, list := mapEntry(m, "buildMetadata")
	if list == nil {
		list = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "buildMetadata"}, list)
	}
	if list.Kind != yaml.SequenceNode {
		return data, nil
	}
	for _, item := range list.Content {
		if item.Value == types.OriginAnnotations {
			return data, nil
		}
	}
	list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: types.OriginAnnotations})
	return yaml.Marshal(m)
}

// Includes lists the directories among resources, components and bases of
// the kustomization in dir that are kustomizations themselves, as absolute
// paths. An unreadable or malformed kustomization file includes nothing
// here: building it reports the problem.
func Includes(fsys inputfs.FS, dir string) []string {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	k, _, err := readKustomization(fsys, absDir)
	if err != nil {
		return nil
	}
	return includes(fsys, absDir, k)
}

// includes is Includes for k, the kustomization read from absDir.
func includes(fsys inputfs.FS, absDir string, k *types.Kustomization) []string {
	var out []string
	//lint:ignore SA1019 kustomize still builds the bases of old kustomizations, so knc reads them too
	for _, list := range [][]string{k.Resources, k.Components, k.Bases} {
		for _, entry := range list {
			if !isLocalRelativePath(entry) {
				continue
			}
			sub := filepath.Join(absDir, entry)
			if load.KustomizationFile(fsys, sub) != "" {
				out = append(out, sub)
			}
		}
	}
	return out
}
