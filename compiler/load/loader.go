package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/internal/parallel"
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
}

// OutputMarker is the file knc build writes into its output directory. The
// loader skips any directory that holds it, so a build committed next to its
// sources is never read back as input.
const OutputMarker = ".knc-output"

var manifestExt = map[string]bool{".yaml": true, ".yml": true, ".json": true, ".cue": true}

// Files lists the manifest files under opts.Paths in lexical order. A path
// named explicitly is loaded whatever its extension.
func Files(opts Options) ([]string, error) {
	var files []string
	var errs []error
	for _, p := range opts.Paths {
		info, err := os.Stat(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(file string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if excluded(opts, file) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if file != p && strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(file, OutputMarker)); err == nil {
					return filepath.SkipDir
				}
				return nil
			}
			if manifestExt[filepath.Ext(file)] && !slices.Contains(opts.Skip, absPath(file)) {
				files = append(files, file)
			}
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	slices.Sort(files)
	return slices.Compact(files), errors.Join(errs...)
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
}

// LoadFiles reads the given files.
func LoadFiles(files []string) ([]*Document, diag.List, error) {
	return LoadFilesIn("", files)
}

// LoadFilesIn reads the given files and names them, in documents and
// diagnostics, relative to dir when they lie below it.
func LoadFilesIn(dir string, files []string) ([]*Document, diag.List, error) {
	var chunks []*chunk
	var cueFiles []*chunk
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			return nil, nil, err
		}
		f := file
		if dir != "" {
			f = diag.RelPath(dir, file)
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
	parallel.For(len(chunks), func(i int) { chunks[i].parseYAML() })
	for _, c := range cueFiles {
		c.parseCUE()
	}
	// Order by file; a CUE file's documents slot in among the YAML ones.
	all := append(chunks, cueFiles...)
	slices.SortStableFunc(all, func(a, b *chunk) int { return strings.Compare(a.file, b.file) })
	var docs []*Document
	var diags diag.List
	indexInFile := map[string]int{}
	for _, c := range all {
		for _, d := range c.docs {
			d.Index = indexInFile[d.File]
			indexInFile[d.File]++
			docs = append(docs, d)
		}
		diags = append(diags, c.diags...)
	}
	return docs, diags, nil
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
	c.addObject(root.Content[0])
}

// addObject records n as an object, expanding a v1 List into its items.
func (c *chunk) addObject(n *yaml.Node) {
	n = resolve(n)
	doc := &Document{File: c.file, Root: n}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.MappingNode {
		c.diags.Add(doc.Pos(n), "", "a manifest must be an object with apiVersion and kind, not a %s", nodeKind(n))
		return
	}
	doc.APIVersion = scalar(n, "apiVersion")
	doc.Kind = scalar(n, "kind")
	if doc.APIVersion == "" || doc.Kind == "" {
		c.diags.Add(doc.Pos(n), "", "not a Kubernetes object: apiVersion and kind are required")
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
	c.docs = append(c.docs, doc)
}

func scalar(n *yaml.Node, key string) string {
	v := resolve(child(n, key))
	if v == nil || v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return ""
	}
	return v.Value
}

func shift(n *yaml.Node, lines int) {
	if lines == 0 {
		return
	}
	var walk func(*yaml.Node)
	seen := map[*yaml.Node]bool{}
	walk = func(n *yaml.Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		n.Line += lines
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
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
