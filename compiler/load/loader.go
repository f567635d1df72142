package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/internal/cuelimit"
	"github.com/knc-dev/knc/internal/inputfs"
	"github.com/knc-dev/knc/internal/parallel"
	"github.com/knc-dev/knc/internal/safeio"
)

// Options says what to load.
type Options struct {
	// Paths are files or directories; directories are walked recursively.
	Paths []string
	// Exclude holds path.Match patterns; a file is skipped when the pattern
	// matches its slash-separated path, or any parent of it, relative to
	// Base.
	Exclude []string
	// Base is the directory Exclude patterns are relative to.
	Base string
	// Skip names files that are not manifests (the project config).
	Skip []string
	// Root is the project's root directory. Symbolic links must lead to
	// files and directories below it; empty means the working directory.
	Root string
	// FS is what the paths are read from; nil means the disk.
	FS inputfs.FS
}

// OutputMarker is the file knc build writes into its output directory. The
// loader skips any directory that holds it, so a build committed next to its
// sources is never read back as input.
const OutputMarker = ".knc-output"

// kustomizeGroup is the API group of kustomize's own files.
const kustomizeGroup = "kustomize.config.k8s.io"

var manifestExt = map[string]bool{".yaml": true, ".yml": true, ".json": true, ".cue": true}

// MaxFileBytes is the largest file the loader reads: ten times the
// largest manifest stream measured in the benchmarks, and small enough
// that parsing it stays within a CI runner's memory.
const MaxFileBytes = 64 << 20

// ErrLinkOutside is returned for a symbolic link that leads outside the
// project root: the one sentinel of safeio, so that errors.Is matches
// whichever of the loader, policies or plugins refused the link.
var ErrLinkOutside = safeio.ErrLinkOutside

// Files lists the manifest files under opts.Paths in lexical order. A path
// named explicitly is loaded whatever its extension. It is Discover without
// what Discover says about kustomizations and what it passed over.
func Files(opts Options) ([]string, error) {
	in, err := Discover(opts)
	if err != nil {
		return nil, err
	}
	return in.Files, nil
}

// KustomizationFileNames are the names kustomize recognises, in the order it
// looks for them.
var KustomizationFileNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// KustomizationFile returns the kustomization file in dir, or "".
func KustomizationFile(fsys inputfs.FS, dir string) string {
	for _, name := range KustomizationFileNames {
		file := filepath.Join(dir, name)
		if info, err := fsys.Stat(file); err == nil && info.Mode().IsRegular() {
			return file
		}
	}
	return ""
}

// helmChartFile marks a Helm chart's directory.
const helmChartFile = "Chart.yaml"

// Inputs is what Discover found under the paths it was given.
type Inputs struct {
	// Files are the manifest files, in lexical order, kustomization files
	// left out.
	Files []string
	// Kustomizations are the directories that hold a kustomization file,
	// in lexical order. Files below them are listed in Files too: which
	// of them a kustomization includes is known only once it is built.
	Kustomizations []string
	// Skipped are the files and directories passed over while walking.
	Skipped []Skipped
}

// Discover walks opts.Paths. Directories are walked recursively in lexical
// order; hidden files and directories (a name starting with a dot), Helm
// charts and knc's own build outputs are passed over, as are the
// kustomization files themselves. A file named explicitly is read whatever
// its name and extension.
//
// Symbolic links are followed, to files and to directories, as long as
// what they lead to lies below the project root (opts.Root, or for a path
// outside it, that path): a link to /etc/passwd or ../../secrets is
// refused, so that a contributed link cannot read files from the machine
// running knc. Only regular files and directories are listed: a FIFO or a
// device is refused.
func Discover(opts Options) (*Inputs, error) {
	w := &walker{opts: opts, fs: inputfs.Or(opts.FS), visited: map[string]bool{}}
	for _, p := range opts.Paths {
		w.path(p)
	}
	in := &w.in
	slices.Sort(in.Files)
	in.Files = slices.Compact(in.Files)
	slices.Sort(in.Kustomizations)
	in.Kustomizations = slices.Compact(in.Kustomizations)
	return in, errors.Join(w.errs...)
}

type walker struct {
	opts    Options
	fs      inputfs.FS
	in      Inputs
	errs    []error
	visited map[string]bool // resolved directories already walked
}

// rootFor returns the resolved directory the links under p must stay in.
func (w *walker) rootFor(p string) string {
	abs := absPath(p)
	root := w.opts.Root
	if root == "" {
		root = "."
	}
	if within(absPath(root), abs) {
		return resolved(w.fs, root)
	}
	if info, err := w.fs.Stat(abs); err == nil && !info.IsDir() {
		return resolved(w.fs, filepath.Dir(abs))
	}
	return resolved(w.fs, abs)
}

func (w *walker) path(p string) {
	// Lstat, so that a link is looked at by follow, which checks where
	// it leads before anything there is.
	if _, err := w.fs.Lstat(p); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Op = "stat" // what the user asked for, whatever p is
		}
		w.errs = append(w.errs, err)
		return
	}
	root := w.rootFor(p)
	info, err := w.follow(p, root)
	if err != nil {
		w.errs = append(w.errs, err)
		return
	}
	if info.IsDir() {
		if KustomizationFile(w.fs, p) != "" {
			w.in.Kustomizations = append(w.in.Kustomizations, filepath.Clean(p))
		}
		w.dir(p, root)
		return
	}
	if slices.Contains(KustomizationFileNames, filepath.Base(p)) {
		w.in.Kustomizations = append(w.in.Kustomizations, filepath.Dir(p))
		return
	}
	w.in.Files = append(w.in.Files, p)
}

// follow resolves p, refuses it when it leads outside root or is neither a
// regular file nor a directory, and returns what it leads to.
func (w *walker) follow(p, root string) (fs.FileInfo, error) {
	target, err := resolveWithin(w.fs, p, root)
	if err != nil {
		return nil, err
	}
	info, err := w.fs.Stat(target)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() && !info.Mode().IsRegular() {
		return nil, safeio.NotRegular(p, info.Mode())
	}
	return info, nil
}

func (w *walker) dir(p, root string) {
	real := resolved(w.fs, p)
	if w.visited[real] || excluded(w.opts, p) {
		return // a link to a directory already walked, or to a parent of it
	}
	if _, err := w.fs.Stat(filepath.Join(p, OutputMarker)); err == nil {
		return
	}
	w.visited[real] = true
	// A trailing separator makes WalkDir follow p when it is a link.
	start := p
	if !strings.HasSuffix(start, string(filepath.Separator)) {
		start += string(filepath.Separator)
	}
	err := w.fs.WalkDir(start, func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if file == start {
			return nil
		}
		if excluded(w.opts, file) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if err := w.skipDir(file, d); err != nil {
				return err
			}
			real := resolved(w.fs, file)
			if w.visited[real] {
				return filepath.SkipDir
			}
			w.visited[real] = true
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			info, err := w.follow(file, root)
			if err != nil {
				// Only a link the loader would have read is an error. A link
				// with a manifest's name is refused without looking at its
				// target; whether any other link leads to a directory is
				// known only by looking at where it leads.
				if manifestExt[filepath.Ext(file)] || isDirLink(w.fs, file) {
					w.errs = append(w.errs, err)
				}
				return nil
			}
			if info.IsDir() {
				if w.skipDir(file, d) == nil {
					w.dir(file, root)
				}
				return nil
			}
		} else if !d.Type().IsRegular() && manifestExt[filepath.Ext(file)] {
			w.errs = append(w.errs, safeio.NotRegular(file, d.Type()))
			return nil
		}
		if slices.Contains(KustomizationFileNames, d.Name()) {
			return nil // read when its directory is built
		}
		if !manifestExt[filepath.Ext(file)] || slices.Contains(w.opts.Skip, absPath(file)) {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			w.in.Skipped = append(w.in.Skipped, Skipped{Path: file, Reason: "a hidden file"})
			return nil
		}
		if isRouteTest(d.Name()) {
			w.in.Skipped = append(w.in.Skipped, Skipped{Path: file, Reason: "a route test file, which knc test reads"})
			return nil
		}
		w.in.Files = append(w.in.Files, file)
		return nil
	})
	if err != nil {
		w.errs = append(w.errs, err)
	}
}

// skipDir returns filepath.SkipDir for a hidden directory, a build output
// or a Helm chart, and notes a directory that holds a kustomization.
func (w *walker) skipDir(dir string, d fs.DirEntry) error {
	if strings.HasPrefix(d.Name(), ".") {
		return filepath.SkipDir
	}
	if _, err := w.fs.Stat(filepath.Join(dir, OutputMarker)); err == nil {
		return filepath.SkipDir
	}
	if _, err := w.fs.Stat(filepath.Join(dir, helmChartFile)); err == nil {
		w.in.Skipped = append(w.in.Skipped, Skipped{Path: dir, Reason: "a Helm chart: knc reads rendered manifests, such as the output of helm template piped into knc validate -"})
		return filepath.SkipDir
	}
	if KustomizationFile(w.fs, dir) != "" {
		w.in.Kustomizations = append(w.in.Kustomizations, dir)
	}
	return nil
}

// isRouteTest reports whether a file is a knc test file
// (*.knctest.yaml): its events are not manifests, even though they may
// look like objects.
func isRouteTest(name string) bool {
	return strings.HasSuffix(name, ".knctest.yaml") || strings.HasSuffix(name, ".knctest.yml")
}

func isDirLink(fsys inputfs.FS, file string) bool {
	info, err := fsys.Stat(file)
	return err == nil && info.IsDir()
}

// within reports whether p is dir or lies below it; both are clean and
// absolute.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && filepath.IsLocal(rel) || rel == "."
}

// resolved returns p with its symbolic links resolved, or p absolute when
// it cannot be resolved.
func resolved(fsys inputfs.FS, p string) string {
	if r, err := fsys.EvalSymlinks(p); err == nil {
		return absPath(r)
	}
	return absPath(p)
}

func excluded(opts Options, file string) bool {
	return Excluded(opts.Exclude, opts.Base, file)
}

// Excluded reports whether a pattern matches file, or one of its parents,
// taken relative to base.
func Excluded(patterns []string, base, file string) bool {
	if len(patterns) == 0 {
		return false
	}
	rel := file
	if base != "" {
		if r, err := filepath.Rel(base, absPath(file)); err == nil {
			rel = r
		}
	}
	rel = filepath.ToSlash(rel)
	for p := rel; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		for _, pat := range patterns {
			if ok, _ := path.Match(strings.TrimSuffix(pat, "/"), p); ok {
				return true
			}
		}
	}
	return false
}

func absPath(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return filepath.Clean(file)
	}
	return abs
}

// chunk is one YAML document of a stream, parsed on its own so that large
// streams parse in parallel.
type chunk struct {
	file   string
	index  int
	text   []byte
	offset int // lines before the chunk in its file
	docs   []*Document
	diags  diag.List
	// parsed keeps the documents' yaml.v3 nodes rather than compact them.
	parsed bool
	// foreign holds what would be said of documents that are not
	// Kubernetes objects at all (no apiVersion, no kind): errors when
	// their file also holds objects, nothing when it holds none.
	foreign diag.List
	// aliasBytes holds, for each document with aliases, the bytes they
	// add, to be charged against the budget in the order of the files.
	aliasBytes []aliasBytes
}

type aliasBytes struct {
	at diag.Pos
	n  int64
}

// LoadFiles reads the given files.
func LoadFiles(files []string) ([]*Document, diag.List, error) {
	return LoadFilesIn("", files)
}

// LoadFilesIn reads the given files and names them, in documents and
// diagnostics, relative to dir when they lie below it. Files that hold no
// Kubernetes object are passed over silently; ReadFiles lists them.
func LoadFilesIn(dir string, files []string) ([]*Document, diag.List, error) {
	l, err := ReadFiles(inputfs.Disk, dir, files, cuelimit.Default, nil)
	if err != nil {
		return nil, nil, err
	}
	return l.Docs, l.Diags, nil
}

// Loaded is what ReadFiles found in a set of files.
type Loaded struct {
	Docs  []*Document
	Diags diag.List
	// Skipped are the files that hold no Kubernetes object: tool and CI
	// configuration that lives beside manifests.
	Skipped []Skipped
}

// Skipped is a file or directory the loader passed over, and why.
type Skipped struct {
	Path   string
	Reason string
}

// notAnObject is why a file with neither apiVersion nor kind is skipped.
const notAnObject = "no document has apiVersion and kind: not a Kubernetes manifest"

// ReadFiles reads the given files as LoadFilesIn does, and also says which
// files were skipped because none of their documents is a Kubernetes object.
// A file whose documents mix objects with such documents is an error at
// each of the latter, as before. CUE files are evaluated under limits; see
// Read. The files are counted against budget, and a file that would take
// it over its limit is not read.
func ReadFiles(fsys inputfs.FS, dir string, files []string, limits cuelimit.Limits, budget *InputBudget) (*Loaded, error) {
	sources := make([]Source, len(files))
	for i, file := range files {
		f := file
		if dir != "" {
			f = diag.RelPath(dir, file)
		}
		var size int64
		if info, err := fsys.Stat(file); err == nil && info.Mode().IsRegular() {
			size = info.Size()
		}
		if err := budget.ChargeFile(absPath(file), f, size); err != nil {
			return nil, err
		}
		src, err := fsys.ReadFile(file, MaxFileBytes)
		if err != nil {
			return nil, err
		}
		// The file may have changed since it was measured.
		if err := budget.Charge(f, int64(len(src))-size); err != nil {
			return nil, err
		}
		sources[i] = Source{Name: f, Data: src}
	}
	return Read(sources, limits, budget)
}

// Source is the content of a file, or of a stream such as standard input,
// under the name documents and diagnostics give it.
type Source struct {
	Name string
	Data []byte
}

// Read reads sources as ReadFiles reads files. A source's format is told
// by the extension of its name: .cue is CUE, anything else YAML or JSON.
// The bytes aliases add are charged to budget, or, when it is nil, to a
// budget of the default limits for this call alone; the sources' own
// bytes are the caller's to charge.
//
// Each CUE file is evaluated under limits. The error is a
// *cuelimit.Exceeded naming the file that went over them: its evaluation
// cannot be interrupted and goes on, so the program should report the
// error and exit.
func Read(sources []Source, limits cuelimit.Limits, budget *InputBudget) (*Loaded, error) {
	return read(sources, limits, budget, false)
}

// ReadParsed reads sources as Read does, but leaves each document's
// yaml.v3 nodes as parsed, comments and all, rather than compact: for
// kustomize's renderer, which reads comments. Node returns them.
func ReadParsed(sources []Source, limits cuelimit.Limits, budget *InputBudget) (*Loaded, error) {
	return read(sources, limits, budget, true)
}

func read(sources []Source, limits cuelimit.Limits, budget *InputBudget, parsed bool) (*Loaded, error) {
	if budget == nil {
		budget = NewInputBudget(0, 0)
	}
	var chunks []*chunk
	var cueFiles []*chunk
	for _, s := range sources {
		f, src := s.Name, s.Data
		if len(bytes.TrimSpace(src)) == 0 {
			continue
		}
		if filepath.Ext(f) == ".cue" {
			cueFiles = append(cueFiles, &chunk{file: f, text: src})
			continue
		}
		for i, c := range splitStream(src) {
			c.file, c.index = f, i
			chunks = append(chunks, c)
		}
	}
	for _, c := range append(chunks, cueFiles...) {
		c.parsed = parsed
	}
	parallel.For(len(chunks), func(i int) { chunks[i].parseYAML() })
	// One at a time, so that each file's evaluation has the heap budget
	// to itself.
	for _, c := range cueFiles {
		task := cuelimit.Task{Name: "evaluation of CUE manifest " + c.file, Subject: "the file"}
		if err := limits.Guard(task, c.parseCUE); err != nil {
			return nil, err
		}
	}
	// Order by file; a CUE file's documents slot in among the YAML ones.
	all := append(chunks, cueFiles...)
	slices.SortStableFunc(all, func(a, b *chunk) int { return strings.Compare(a.file, b.file) })
	l := &Loaded{}
	indexInFile := map[string]int{}
	// A file holds objects, or other problems, when any of its chunks does.
	manifest := map[string]bool{}
	for _, c := range all {
		if len(c.docs) > 0 || len(c.diags) > 0 {
			manifest[c.file] = true
		}
	}
	for _, c := range all {
		// In the order of the files, so that the same document is named
		// however the parsing was spread over the cores.
		for _, a := range c.aliasBytes {
			if err := budget.ChargeAliases(a.n); err != nil {
				c.diags.Add(a.at, "", "%v", err)
				c.docs = nil
			}
		}
		for _, d := range c.docs {
			d.Index = indexInFile[d.File]
			indexInFile[d.File]++
			l.Docs = append(l.Docs, d)
		}
		l.Diags = append(l.Diags, c.diags...)
		if len(c.foreign) == 0 {
			continue
		}
		if manifest[c.file] {
			l.Diags = append(l.Diags, c.foreign...)
		} else if len(l.Skipped) == 0 || l.Skipped[len(l.Skipped)-1].Path != c.file {
			l.Skipped = append(l.Skipped, Skipped{Path: c.file, Reason: notAnObject})
		}
	}
	return l, nil
}

// splitStream cuts a YAML stream at its document markers. A marker at the
// start of a line always ends the previous document in YAML, even inside a
// block scalar, so cutting there never splits a value.
func splitStream(src []byte) []*chunk {
	var out []*chunk
	start, startLine, line := 0, 0, 0
	for pos := 0; pos <= len(src); {
		end := bytes.IndexByte(src[pos:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += pos
		}
		l := src[pos:end]
		if isMarker(l, "---") || isMarker(l, "...") {
			out = append(out, &chunk{text: src[start:pos], offset: startLine})
			// Keep the marker line out of the next chunk but count it, so
			// that "--- {a: 1}" style inline content still parses.
			rest := bytes.TrimLeft(l[3:], " \t")
			if len(rest) > 0 && !bytes.HasPrefix(rest, []byte("#")) && isMarker(l, "---") {
				start, startLine = pos+3, line
			} else {
				start, startLine = end+1, line+1
			}
		}
		pos, line = end+1, line+1
	}
	if start < len(src) {
		out = append(out, &chunk{text: src[start:], offset: startLine})
	}
	return out
}

func isMarker(line []byte, marker string) bool {
	if !bytes.HasPrefix(line, []byte(marker)) {
		return false
	}
	rest := line[3:]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r'
}

func (c *chunk) parseYAML() {
	if len(bytes.TrimSpace(c.text)) == 0 {
		return
	}
	if !c.parsed && c.readCompact() {
		return
	}
	c.parseYAMLv3()
}

// readCompact reads the chunk with the compact reader, straight into a
// compacted document, and reports whether it did. It leaves to yaml.v3
// whatever it does not read, and every document that is not a plain
// object: a List, a kustomization, one without apiVersion or kind.
func (c *chunk) readCompact() bool {
	t := readCompact(c.text, c.offset)
	if t == nil {
		return false
	}
	root := node{t, 0}
	if root.kind() != yaml.MappingNode {
		return false
	}
	doc := &Document{File: c.file, tree: t, APIVersion: root.scalar("apiVersion"), Kind: root.scalar("kind")}
	if doc.APIVersion == "" || doc.Kind == "" || strings.HasPrefix(doc.APIVersion, kustomizeGroup+"/") ||
		doc.Kind == "List" && doc.APIVersion == "v1" {
		return false
	}
	if md, ok := root.field("metadata"); ok {
		doc.Name = md.scalar("name")
		doc.Namespace = md.scalar("namespace")
	}
	c.docs = append(c.docs, doc)
	return true
}

// parseYAMLv3 reads the chunk with yaml.v3.
func (c *chunk) parseYAMLv3() {
	if d, ok := c.invalidUTF8(); !ok {
		c.diags = append(c.diags, d)
		return
	}
	var root yaml.Node
	if err := yaml.Unmarshal(c.text, &root); err != nil {
		if filepath.Ext(c.file) == ".json" {
			c.diags = append(c.diags, jsonError(c.file, c.text, err))
			return
		}
		d := yamlError(c.file, c.offset, err)
		if d.Pos.Line == 0 {
			// yaml.v3 gives no line for errors of its reader (bad
			// encoding, control characters) nor at the end of the
			// stream: point at the document, or at its last line.
			d.Pos.Line, d.Pos.Column = c.offset+1, 1
			if strings.Contains(d.Message, "end of stream") {
				d.Pos.Line += bytes.Count(bytes.TrimRight(c.text, "\n"), []byte("\n"))
			}
		}
		c.diags = append(c.diags, d)
		return
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return // only comments
	}
	shift(&root, c.offset)
	if !c.normalise(&Document{File: c.file}, root.Content[0]) {
		return
	}
	c.addObject(root.Content[0])
}

// invalidUTF8 reports the first byte of the chunk that is not UTF-8 at its
// line and column; the YAML parser reports it at the start of the stream.
// A stream in UTF-16, which YAML allows, starts with a byte order mark.
func (c *chunk) invalidUTF8() (diag.Diagnostic, bool) {
	if utf8.Valid(c.text) || bytes.HasPrefix(c.text, []byte{0xfe, 0xff}) || bytes.HasPrefix(c.text, []byte{0xff, 0xfe}) {
		return diag.Diagnostic{}, true
	}
	off := 0
	for off < len(c.text) {
		r, size := utf8.DecodeRune(c.text[off:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		off += size
	}
	before := c.text[:off]
	line := c.offset + bytes.Count(before, []byte("\n")) + 1
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return diag.Diagnostic{
		Pos:     diag.Pos{File: c.file, Line: line, Column: col},
		Message: fmt.Sprintf("invalid UTF-8: byte 0x%02x; save the file as UTF-8", c.text[off]),
	}, false
}

// addObject records n as an object, expanding a v1 List into its items.
func (c *chunk) addObject(n *yaml.Node) {
	n = resolve(n)
	doc := &Document{File: c.file, root: n}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.MappingNode {
		c.foreign.Add(doc.Pos(n), "", "a manifest must be an object with apiVersion and kind, not a %s", nodeKind(n))
		return
	}
	doc.APIVersion = scalar(n, "apiVersion")
	doc.Kind = scalar(n, "kind")
	if doc.APIVersion == "" && doc.Kind == "" && child(n, "apiVersion") == nil && child(n, "kind") == nil {
		c.foreign.Add(doc.Pos(n), "", "not a Kubernetes object: apiVersion and kind are required")
		return
	}
	if doc.APIVersion == "" || doc.Kind == "" {
		c.diags.Add(doc.Pos(n), "", "not a Kubernetes object: apiVersion and kind are required")
		return
	}
	if strings.HasPrefix(doc.APIVersion, kustomizeGroup+"/") {
		// A kustomization.yaml (Kustomization, Component) says how
		// kustomize builds the manifests; it is never applied, and knc's
		// own output holds one per directory.
		return
	}
	if doc.Kind == "List" && doc.APIVersion == "v1" {
		if items := child(n, "items"); items != nil && items.Kind == yaml.SequenceNode {
			for _, it := range items.Content {
				c.addObject(it)
			}
			return
		}
	}
	if md := child(n, "metadata"); md != nil {
		doc.Name = scalar(md, "name")
		doc.Namespace = scalar(md, "namespace")
	}
	// Compacted here, in the worker that parsed it, so that the parsed
	// nodes of all documents are never held at once.
	if !c.parsed {
		doc.Compact()
	}
	c.docs = append(c.docs, doc)
}

func scalar(n *yaml.Node, key string) string {
	v := resolve(child(n, key))
	if v == nil || v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return ""
	}
	return v.Value
}

// shift moves the nodes of a freshly parsed document down by lines. As
// parsed, before merge keys are merged, the document is a tree: an alias
// points at its anchor but does not hold it among its Content.
func shift(n *yaml.Node, lines int) {
	if lines == 0 {
		return
	}
	n.Line += lines
	for _, c := range n.Content {
		shift(c, lines)
	}
}

func nodeKind(n *yaml.Node) string { return kindName(n.Kind) }

func kindName(kind yaml.Kind) string {
	switch kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	default:
		return "value"
	}
}

// yamlError turns a yaml.v3 error ("yaml: line 3: ...") into a diagnostic.
func yamlError(file string, offset int, err error) diag.Diagnostic {
	msg := err.Error()
	line := 0
	msg = strings.TrimPrefix(msg, "yaml: ")
	if strings.HasPrefix(msg, "line ") {
		rest := msg[len("line "):]
		if i := strings.IndexByte(rest, ':'); i > 0 {
			if _, scanErr := fmt.Sscanf(rest[:i], "%d", &line); scanErr == nil {
				msg = strings.TrimSpace(rest[i+1:])
			}
		}
	}
	// yaml.v3 counts the lines of parser errors, which it reports where the
	// construct being parsed began, from 0, and those of scanner errors from 1.
	if strings.HasPrefix(msg, "did not find expected") {
		line++
	}
	pos := diag.Pos{File: file}
	if line > 0 {
		pos.Line, pos.Column = line+offset, 1
	}
	return diag.Diagnostic{Pos: pos, Message: "invalid YAML: " + msg}
}

// jsonError reports a JSON syntax error at its line and column, which
// encoding/json knows and the YAML parser does not.
func jsonError(file string, src []byte, yamlErr error) diag.Diagnostic {
	var x any
	err := json.Unmarshal(src, &x)
	var syntax *json.SyntaxError
	if !errors.As(err, &syntax) {
		d := yamlError(file, 0, yamlErr)
		d.Message = strings.Replace(d.Message, "invalid YAML", "invalid JSON", 1)
		return d
	}
	before := src[:min(int(syntax.Offset), len(src))]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(syntax.Offset) - bytes.LastIndexByte(before, '\n') - 1
	return diag.Diagnostic{Pos: diag.Pos{File: file, Line: line, Column: max(col, 1)}, Message: "invalid JSON: " + syntax.Error()}
}
