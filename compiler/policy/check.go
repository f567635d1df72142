package policy

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
)

// Check evaluates every policy on every entry it matches, in parallel,
// and reports each violation at the field of the object it concerns. The
// error says that the evaluation went over its limits; the violations
// found are then incomplete.
func (s *Set) Check(entries []*model.Entry, limits Limits) (diag.List, error) {
	if s == nil || len(s.Policies) == 0 || len(entries) == 0 {
		return nil, nil
	}
	workers := min(runtime.GOMAXPROCS(0), len(entries))
	var next atomic.Int64
	busy := make([]activity, workers)
	found := make([]diag.List, workers)
	work := func() {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				found[w] = s.checkShare(entries, &next, &busy[w])
			}()
		}
		wg.Wait()
	}
	doing := func() string {
		var what []string
		for i := range busy {
			if w := busy[i].describe(s, entries); w != "" {
				what = append(what, w)
			}
		}
		if len(what) == 0 {
			return "checking the objects"
		}
		return strings.Join(what, ", and ")
	}
	if err := guard(limits, doing, work); err != nil {
		return nil, err
	}
	var out diag.List
	for _, d := range found {
		out = append(out, d...)
	}
	return out.Sorted(), nil
}

// compiled is one worker's build of a policy.
type compiled struct {
	*Policy
	index     int
	constrain cue.Value
	fields    fieldTree
	// supplies says that the constraint sets a concrete value of its
	// own somewhere, such as kind: "Service": combined with a policy
	// that asks for that field to be set, it would fill it in, so it is
	// always checked on its own.
	supplies bool
}

// checkShare compiles the policies in a context of its own and checks
// entries, taking the next index from next until none are left.
func (s *Set) checkShare(entries []*model.Entry, next *atomic.Int64, busy *activity) diag.List {
	ctx := cuecontext.New()
	values, diags := s.compile(ctx, func(file string) { busy.file.Store(&file) })
	busy.file.Store(nil)
	if len(diags) > 0 {
		// Load compiled the same files without error.
		return diags
	}
	policies := make([]compiled, len(s.Policies))
	for i, p := range s.Policies {
		c := values[p.file].LookupPath(cue.MakePath(cue.Str("policy"), cue.Str(p.Name), cue.Str("constrain")))
		policies[i] = compiled{Policy: p, index: i, constrain: c, fields: treeOf(c, 0), supplies: suppliesValues(c, 0)}
	}
	var out diag.List
	var selected, pending []*compiled
	inputs := make([]input, len(policies))
	groups := groupCache{}
	memo := verdicts{}
	var keyBuf []byte
	for {
		i := int(next.Add(1)) - 1
		if i >= len(entries) {
			return out
		}
		e := entries[i]
		labels := e.Doc.Labels()
		selected = selected[:0]
		for j := range policies {
			p := &policies[j]
			if p.Match.Selects(e.Doc.APIVersion, e.Doc.Kind, e.Key.Namespace, labels) {
				selected = append(selected, p)
			}
		}
		if len(selected) == 0 {
			continue
		}
		// The same fields get the same verdict: objects written from one
		// template share most of what a policy looks at.
		pending = pending[:0]
		root := e.Doc.Value()
		for _, p := range selected {
			keyBuf = strconv.AppendInt(keyBuf[:0], int64(p.index), 10)
			keyBuf = appendKey(append(keyBuf, ':'), root, p.fields)
			if verdict, ok := memo[string(keyBuf)]; ok {
				if verdict != nil {
					out = append(out, violations(p.Policy, e.Doc, verdict)...)
				}
				continue
			}
			x, err := pruned(root, p.fields)
			if err != nil {
				out.Add(e.Doc.PosOf(""), "", "the object cannot be checked against policies: %v", err)
				pending = pending[:0]
				break
			}
			inputs[p.index] = input{x: x, key: string(keyBuf)}
			pending = append(pending, p)
		}
		if len(pending) == 0 {
			continue
		}
		// Most objects comply: one unification with every policy that
		// can be combined settles them, and only when it fails is each
		// policy checked on its own, to say which one the object breaks.
		alone := pending
		if g := groups.of(ctx, pending); g != nil {
			busy.checking.Store(int64(i)<<16 | int64(g.first+1))
			x, err := pruned(root, g.fields)
			if err == nil && g.constrain.Unify(ctx.Encode(numbers(x))).Validate(cue.Concrete(true)) == nil {
				for _, p := range pending {
					if !p.supplies {
						memo.put(inputs[p.index].key, nil)
					}
				}
				alone = g.rest
			}
		}
		for _, p := range alone {
			busy.checking.Store(int64(i)<<16 | int64(p.index+1))
			in := inputs[p.index]
			verdict := p.constrain.Unify(ctx.Encode(numbers(in.x))).Validate(cue.Concrete(true))
			memo.put(in.key, verdict)
			if verdict != nil {
				out = append(out, violations(p.Policy, e.Doc, verdict)...)
			}
		}
		busy.checking.Store(0)
	}
}

// input is what a policy is checked against: the fields of the object it
// names, and the key of its verdict.
type input struct {
	x   any
	key string
}

// verdicts remembers, per worker, the outcome of a policy on a set of
// fields: nil, or the error the unification gave.
type verdicts map[string]error

// maxVerdicts bounds the memory verdicts take; past it they start over.
const maxVerdicts = 1 << 17

func (v verdicts) put(key string, verdict error) {
	if len(v) >= maxVerdicts {
		clear(v)
	}
	v[key] = verdict
}

// activity is what one worker is busy with, for the message when the
// limits stop it: a file it compiles, or an entry index and a policy
// index plus one, packed, while it checks.
type activity struct {
	file     atomic.Pointer[string]
	checking atomic.Int64
}

func (a *activity) describe(s *Set, entries []*model.Entry) string {
	if f := a.file.Load(); f != nil {
		return "compiling " + *f
	}
	c := a.checking.Load()
	if c == 0 {
		return ""
	}
	e, p := entries[c>>16], s.Policies[c&0xffff-1]
	return fmt.Sprintf("checking policy %s on %s %s at %s", p.Name, e.Key.Kind, objectName(e), e.Doc.PosOf(""))
}

// numbers turns the json.Numbers of a generic object into Go numbers, which
// CUE encodes as numbers rather than as the strings they are.
func numbers(x any) any {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			x[k] = numbers(v)
		}
	case []any:
		for i, v := range x {
			x[i] = numbers(v)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
	}
	return x
}

func objectName(e *model.Entry) string {
	if e.Key.Namespace == "" {
		return e.Key.Name
	}
	return e.Key.Namespace + "/" + e.Key.Name
}

// violations reports each CUE error at the object's field it concerns,
// or, when the policy asks for a field that is not there, at the key of
// the nearest field that is.
func violations(p *Policy, doc *load.Document, err error) diag.List {
	var out diag.List
	seen := map[string]bool{}
	for _, e := range cueerrors.Errors(err) {
		prefixes := fieldPaths(e.Path())
		path := ""
		if len(prefixes) > 0 {
			path = prefixes[len(prefixes)-1]
		}
		if seen[path] {
			continue
		}
		seen[path] = true
		format, args := e.Msg()
		detail := fmt.Sprintf(format, args...)
		if strings.HasPrefix(detail, "incomplete value") || strings.Contains(detail, "required but not present") {
			detail = "not set"
		}
		out = append(out, diag.Diagnostic{
			Pos:      position(doc, prefixes),
			Path:     path,
			Message:  fmt.Sprintf("policy %s: %s (%s)", p.Name, p.Message, detail),
			Severity: p.Severity,
		})
	}
	return out
}

func position(doc *load.Document, prefixes []string) diag.Pos {
	for i := len(prefixes) - 1; i >= 0; i-- {
		key, ok := doc.KeyPos(prefixes[i])
		if !ok {
			continue
		}
		if i == len(prefixes)-1 {
			return doc.PosOf(prefixes[i])
		}
		return key
	}
	return doc.PosOf("")
}

// fieldPaths turns a CUE error path, policy.NAME.constrain.spec.filters.0,
// into the object's field path and each of its prefixes: spec,
// spec.filters, spec.filters[0].
func fieldPaths(segs []string) []string {
	if len(segs) >= 3 && segs[0] == "policy" && segs[2] == "constrain" {
		segs = segs[3:]
	}
	var out []string
	path := ""
	for _, s := range segs {
		if i, err := strconv.Atoi(s); err == nil {
			path = load.JoinIndex(path, i)
		} else {
			if unquoted, err := strconv.Unquote(s); err == nil {
				s = unquoted
			}
			path = load.JoinKey(path, s)
		}
		out = append(out, path)
	}
	return out
}
