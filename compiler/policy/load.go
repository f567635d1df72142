package policy

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/internal/cueimport"
	"github.com/knc-dev/knc/internal/inputfs"
	policyschema "github.com/knc-dev/knc/schema/policy"
)

// Dir is where a project keeps its policies, relative to knc.yaml.
var Dir = filepath.Join(".knc", "policies")

// Policy is one rule, as its file states it.
type Policy struct {
	Name     string
	Pos      diag.Pos
	Match    Match
	Severity diag.Severity
	Message  string
	// file indexes Set.sources.
	file int
}

// Set is the policies of one run.
type Set struct {
	Policies []*Policy
	sources  []source
	// compiling names the file Load is compiling, for a message when the
	// compilation runs over its limits.
	compiling atomic.Pointer[string]
}

type source struct {
	name string
	data []byte
}

// maxPolicyFileBytes bounds one policy file.
const maxPolicyFileBytes = 4 << 20

// Files lists the .cue files of dirs, each directory's in name order.
// A directory that does not exist is an error: the caller names only
// directories it expects. A file that is a symbolic link must lead below
// root, the project root, or, for a directory outside root, below that
// directory: a link to a file of the machine (a JSON credential is CUE)
// would let a policy quote it in its messages.
func Files(fsys inputfs.FS, root string, dirs []string) ([]string, error) {
	var out []string
	for _, dir := range dirs {
		entries, err := fsys.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("reading policies: %w", err)
		}
		bound := dir
		if below(root, dir) {
			bound = root
		}
		for _, e := range entries {
			if e.IsDir() || filepath.Ext(e.Name()) != ".cue" || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			file := filepath.Join(dir, e.Name())
			if err := inputfs.Within(fsys, bound, file); err != nil {
				return nil, fmt.Errorf("reading policies: %w", err)
			}
			out = append(out, file)
		}
	}
	return out, nil
}

// below reports whether dir, as written, is root or below it.
func below(root, dir string) bool {
	r, err1 := filepath.Abs(root)
	d, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(r, d)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// Load reads and compiles policy files. Mistakes in them are diagnostics
// at their position; the error is for I/O problems.
func Load(fsys inputfs.FS, files []string, limits Limits) (*Set, diag.List, error) {
	s := &Set{}
	for _, f := range files {
		// A FIFO named *.cue would block for ever, and a link to
		// /dev/zero fill the memory: only regular files are read.
		data, err := fsys.ReadFile(f, maxPolicyFileBytes)
		if err != nil {
			return nil, nil, fmt.Errorf("reading policies: %w", err)
		}
		s.sources = append(s.sources, source{name: f, data: data})
	}
	var diags diag.List
	doing := func() string {
		if f := s.compiling.Load(); f != nil {
			return "compiling " + *f
		}
		return "compiling the policy files"
	}
	err := guard(limits, doing, func() {
		diags = s.compileMetadata()
	})
	if err != nil {
		pos := diag.Pos{File: files[0]}
		if f := s.compiling.Load(); f != nil {
			pos.File = *f
		}
		return nil, diag.List{{Pos: pos, Message: err.Error()}}, nil
	}
	if len(diags) > 0 {
		return nil, diags.Sorted(), nil
	}
	return s, nil, nil
}

// compile builds each source in ctx; sources with errors are nil values
// with the errors as diagnostics.
func (s *Set) compile(ctx *cue.Context, at func(file string)) ([]cue.Value, diag.List) {
	var diags diag.List
	values := make([]cue.Value, len(s.sources))
	for i, src := range s.sources {
		at(src.name)
		f, err := parser.ParseFile(src.name, src.data, parser.ParseComments)
		if err != nil {
			diags = append(diags, cueDiags(err, src.name)...)
			continue
		}
		if d := refusedImports(f, src.name); len(d) > 0 {
			diags = append(diags, d...)
			continue
		}
		inst := build.NewContext().NewInstance(filepath.Dir(src.name), nil)
		if err := inst.AddSyntax(f); err != nil {
			diags = append(diags, cueDiags(err, src.name)...)
			continue
		}
		v := ctx.BuildInstance(inst)
		if err := v.Err(); err != nil {
			diags = append(diags, cueDiags(err, src.name)...)
			continue
		}
		values[i] = v
	}
	return values, diags
}

// refusedImports are the diagnostics of f's imports that knc refuses.
func refusedImports(f *ast.File, file string) diag.List {
	var diags diag.List
	for spec := range f.ImportSpecs() {
		path, _ := strconv.Unquote(spec.Path.Value)
		if why := cueimport.Refused(path); why != "" {
			p := spec.Pos()
			diags.Add(diag.Pos{File: file, Line: p.Line(), Column: p.Column()}, "", "policy file imports %q: %s", path, why)
		}
	}
	return diags
}

// compileMetadata compiles every file once, checks it against the policy
// schema, and reads what Go evaluates itself: match, severity, message.
func (s *Set) compileMetadata() diag.List {
	ctx := cuecontext.New()
	schema := ctx.CompileBytes(policyschema.Source, cue.Filename(policyschema.FileName))
	if err := schema.Err(); err != nil {
		return diag.List{{Pos: diag.Pos{File: policyschema.FileName}, Message: fmt.Sprintf("the embedded policy schema does not compile: %v", err)}}
	}
	values, diags := s.compile(ctx, func(file string) { s.compiling.Store(&file) })
	seen := map[string]*Policy{}
	for i, v := range values {
		if !v.Exists() {
			continue
		}
		src := s.sources[i].name
		s.compiling.Store(&src)
		pv := v.LookupPath(cue.ParsePath("policy"))
		if !pv.Exists() {
			diags.Add(diag.Pos{File: src, Line: 1, Column: 1}, "", "a policy file holds policy: NAME: {match: ..., constrain: ..., message: ...}; see knc schema")
			continue
		}
		it, err := pv.Fields()
		if err != nil {
			diags = append(diags, cueDiags(err, src)...)
			continue
		}
		def := schema.LookupPath(cue.ParsePath("#Policy"))
		for it.Next() {
			name := it.Selector().Unquoted()
			p := &Policy{Name: name, Pos: cuePos(it.Value().Pos(), src), file: i}
			if prev, ok := seen[name]; ok {
				diags.Add(p.Pos, "policy."+name, "policy %q is also defined at %s; give each policy its own name", name, prev.Pos)
				continue
			}
			seen[name] = p
			if d := p.readMetadata(it.Value(), def); len(d) > 0 {
				diags = append(diags, d...)
				continue
			}
			s.Policies = append(s.Policies, p)
		}
	}
	slices.SortFunc(s.Policies, func(a, b *Policy) int { return strings.Compare(a.Name, b.Name) })
	return diags
}

// readMetadata checks a policy against the schema's #Policy, and reads
// what Go evaluates itself. Severity and message are checked first, for
// messages plainer than CUE's.
func (p *Policy) readMetadata(v, def cue.Value) diag.List {
	var diags diag.List
	field := func(name string) (cue.Value, diag.Pos, string) {
		f := v.LookupPath(cue.ParsePath(name))
		pos := cuePos(f.Pos(), p.Pos.File)
		if !f.Exists() {
			pos = p.Pos
		}
		return f, pos, "policy." + p.Name + "." + name
	}
	if sev, pos, path := field("severity"); sev.Exists() {
		switch s, err := sev.String(); {
		case err != nil || s != "error" && s != "warning":
			diags.Add(pos, path, "severity is \"error\" or \"warning\", not %v", sev)
		case s == "warning":
			p.Severity = diag.Warning
		}
	}
	msg, pos, path := field("message")
	if m, err := msg.String(); err != nil || m == "" {
		diags.Add(pos, path, "a policy needs a message that says what the rule is and how to comply")
	} else {
		p.Message = m
	}
	if len(diags) > 0 {
		return diags
	}
	if err := v.Unify(def).Validate(); err != nil {
		return cueDiags(err, p.Pos.File)
	}
	if match, pos, path := field("match"); match.Exists() {
		if err := match.Validate(cue.Concrete(true)); err != nil {
			diags.Add(pos, path, "match must be concrete, as knc selects objects with it before any CUE runs: %s", cueMessage(err))
			return diags
		}
		if err := match.Decode(&p.Match); err != nil {
			diags.Add(pos, path, "%v", err)
		}
	}
	return diags
}

// cueMessage is the first message of a CUE error, without its path.
func cueMessage(err error) string {
	errs := cueerrors.Errors(err)
	if len(errs) == 0 {
		return err.Error()
	}
	format, args := errs[0].Msg()
	return fmt.Sprintf(format, args...)
}

// cueDiags turns CUE errors into diagnostics at their positions.
func cueDiags(err error, file string) diag.List {
	var out diag.List
	for _, e := range cueerrors.Errors(err) {
		format, args := e.Msg()
		pos := diag.Pos{File: file}
		if ps := cueerrors.Positions(e); len(ps) > 0 {
			pos = cuePos(ps[0], file)
		}
		path := strings.Join(e.Path(), ".")
		out.Add(pos, path, format, args...)
	}
	return out
}

func cuePos(p token.Pos, file string) diag.Pos {
	if !p.IsValid() {
		return diag.Pos{File: file}
	}
	name := p.Filename()
	if name == "" {
		name = file
	}
	return diag.Pos{File: name, Line: p.Line(), Column: p.Column()}
}
