package plugins

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/internal/cueimport"
	"github.com/knc-dev/knc/internal/cuelimit"
	"github.com/knc-dev/knc/internal/inputfs"
)

// Dir is where a project keeps its plugins, relative to its root (the
// directory of knc.yaml): one subdirectory per plugin, holding the .cue
// files of one CUE package. The directory is hidden so that knc validate,
// which reads every .cue file of the repository as manifests, passes it
// over.
const Dir = ".knc/plugins"

// The fields of a plugin's CUE package.
const (
	fieldClass   = "class"
	fieldChannel = "channel"
	fieldInput   = "render.input"
	fieldOutput  = "render.output"
)

// LoadCUE loads the plugins under root/.knc/plugins, each evaluated under
// limits, as their renders will be. Problems with a plugin's CUE are
// diagnostics; err is for I/O errors, and for a plugin over its limits (a
// *cuelimit.Exceeded: its evaluation goes on, so the program should exit).
func LoadCUE(fsys inputfs.FS, root string, limits cuelimit.Limits) ([]Plugin, diag.List, error) {
	base := filepath.Join(root, Dir)
	entries, err := fsys.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading plugins: %w", err)
	}
	var plugins []Plugin
	var diags diag.List
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p, d, err := loadCUEPlugin(fsys, root, filepath.Join(base, e.Name()), limits)
		if err != nil {
			return nil, nil, err
		}
		diags = append(diags, d...)
		if p != nil {
			plugins = append(plugins, p)
		}
	}
	return plugins, diags, nil
}

type cuePlugin struct {
	name   string
	dir    string
	ctx    *cue.Context
	value  cue.Value
	claims Claims
	// input is "broker" or "channel": the field of render.input the
	// claimed object goes into.
	input  string
	limits cuelimit.Limits
}

// refusedImport says why a plugin may not import path, or "" if it may.
// A plugin is evaluated, never run as a command: the tool packages would
// declare tasks that never run, and are refused so that no plugin seems to
// run a command, read a file or call a URL.
func refusedImport(path string) string {
	if path == "tool" || strings.HasPrefix(path, "tool/") {
		return "a plugin is evaluated, never run as a command, so it may not use the tool packages (tool/exec, tool/file, tool/http, tool/os, tool/cli): compute render.output from render.input alone"
	}
	return cueimport.Refused(path)
}

// task names a plugin's evaluation for cuelimit's errors.
func task(name string, doing func() string) cuelimit.Task {
	return cuelimit.Task{
		Name:    fmt.Sprintf("evaluation of plugin %s (%s)", name, filepath.ToSlash(filepath.Join(Dir, name))),
		Subject: "the plugin",
		Doing:   doing,
	}
}

// maxPluginFileBytes bounds one file of a CUE plugin.
const maxPluginFileBytes = 4 << 20

func loadCUEPlugin(fsys inputfs.FS, root, dir string, limits cuelimit.Limits) (*cuePlugin, diag.List, error) {
	name := filepath.Base(dir)
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("reading plugin %s: %w", name, err)
	}
	var diags diag.List
	inst := build.NewContext().NewInstance(dir, nil)
	files := 0
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".cue" {
			continue
		}
		file := filepath.Join(dir, e.Name())
		// A link to a file of the machine (a JSON credential is CUE)
		// would let the plugin render it into the output; a FIFO named
		// *.cue would block for ever, and a link to /dev/zero fill the
		// memory: only regular files below the project root are read.
		if err := inputfs.Within(fsys, root, file); err != nil {
			return nil, nil, fmt.Errorf("reading plugin %s: %w", name, err)
		}
		src, err := fsys.ReadFile(file, maxPluginFileBytes)
		if err != nil {
			return nil, nil, fmt.Errorf("reading plugin %s: %w", name, err)
		}
		f, err := parser.ParseFile(file, src, parser.ParseComments)
		if err != nil {
			diags = append(diags, cueDiags(err, file, "")...)
			continue
		}
		refused := false
		for spec := range f.ImportSpecs() {
			path, _ := strconv.Unquote(spec.Path.Value)
			if why := refusedImport(path); why != "" {
				p := spec.Pos()
				diags.Add(diag.Pos{File: file, Line: p.Line(), Column: p.Column()}, "", "plugin %s imports %q: %s", name, path, why)
				refused = true
			}
		}
		if refused {
			continue
		}
		if err := inst.AddSyntax(f); err != nil {
			diags = append(diags, cueDiags(err, file, "")...)
			continue
		}
		files++
	}
	if len(diags) > 0 {
		return nil, diags, nil
	}
	if files == 0 {
		diags.Add(diag.Pos{File: dir}, "", "plugin %s has no .cue files", name)
		return nil, diags, nil
	}
	var p *cuePlugin
	err = limits.Guard(task(name, func() string { return "loading it" }), func() {
		p, diags = evalCUEPlugin(name, dir, inst)
	})
	if err != nil {
		return nil, nil, err
	}
	if p != nil {
		p.limits = limits
	}
	return p, diags, nil
}

// evalCUEPlugin builds a plugin's instance and reads its claims.
func evalCUEPlugin(name, dir string, inst *build.Instance) (*cuePlugin, diag.List) {
	var diags diag.List
	ctx := cuecontext.New()
	v := ctx.BuildInstance(inst)
	if err := v.Err(); err != nil {
		return nil, cueDiags(err, dir, "")
	}
	p := &cuePlugin{name: name, dir: dir, ctx: ctx, value: v}
	class := v.LookupPath(cue.ParsePath(fieldClass))
	channel := v.LookupPath(cue.ParsePath(fieldChannel))
	pos := diag.Pos{File: dir}
	switch {
	case class.Exists() && channel.Exists():
		diags.Add(pos, "", "plugin %s declares both class and channel; a plugin renders either Brokers or Channels", name)
	case class.Exists():
		s, err := class.String()
		if err != nil || s == "" {
			diags.Add(posOf(class, dir), fieldClass, "must be a non-empty string: the Broker class the plugin renders")
			break
		}
		p.claims.BrokerClasses = []string{s}
		p.input = "broker"
	case channel.Exists():
		var k struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := channel.Decode(&k); err != nil || k.APIVersion == "" || k.Kind == "" {
			diags.Add(posOf(channel, dir), fieldChannel, "must be {apiVersion: string, kind: string}: the channel template the plugin renders")
			break
		}
		p.claims.ChannelKinds = []ChannelKind{{APIVersion: k.APIVersion, Kind: k.Kind}}
		p.input = "channel"
	default:
		diags.Add(pos, "", "plugin %s declares neither class (a Broker class) nor channel (a channel template's apiVersion and kind)", name)
	}
	if out := v.LookupPath(cue.ParsePath(fieldOutput)); !out.Exists() {
		diags.Add(pos, fieldOutput, "plugin %s has no render.output: the list of objects it renders", name)
	}
	if len(diags) > 0 {
		return nil, diags
	}
	return p, nil
}

func (p *cuePlugin) Name() string   { return p.name }
func (p *cuePlugin) Claims() Claims { return p.claims }

// Render evaluates render.output once per claimed object, with
// render.input set to {namespace, broker} or {namespace, channel}, each
// under the plugin's limits. The error is a diag.List, or a
// *cuelimit.Exceeded.
func (p *cuePlugin) Render(req *Request) ([]Object, error) {
	claimed := req.Brokers
	if p.input == "channel" {
		claimed = req.Channels
	}
	var out []Object
	var diags diag.List
	for _, c := range claimed {
		md, _ := c.Object["metadata"].(map[string]any)
		rendering := fmt.Sprintf("rendering %s %s/%s", c.Object["kind"], req.Namespace, md["name"])
		subject := fmt.Sprintf("plugin %s %s", p.name, rendering)
		input := map[string]any{"namespace": req.Namespace, p.input: c.Object}
		var (
			list   cue.Value
			objs   []any
			failed error
		)
		err := p.limits.Guard(task(p.name, func() string { return rendering }), func() {
			v := p.value.FillPath(cue.ParsePath(fieldInput), input)
			list = v.LookupPath(cue.ParsePath(fieldOutput))
			if failed = list.Validate(cue.Concrete(true)); failed != nil {
				return
			}
			failed = list.Decode(&objs)
		})
		if err != nil {
			return nil, err
		}
		if failed != nil {
			diags = append(diags, cueDiags(failed, p.dir, subject)...)
			continue
		}
		for i, o := range objs {
			obj, ok := o.(map[string]any)
			if !ok || obj["apiVersion"] == nil || obj["kind"] == nil {
				diags.Add(posOf(list, p.dir), fmt.Sprintf("%s[%d]", fieldOutput, i), "%s: not a Kubernetes object: apiVersion and kind are required", subject)
				continue
			}
			meta, _ := obj["metadata"].(map[string]any)
			if name, _ := meta["name"].(string); name == "" {
				diags.Add(posOf(list, p.dir), fmt.Sprintf("%s[%d].metadata.name", fieldOutput, i), "%s: every object needs a name", subject)
				continue
			}
			if _, ok := meta["namespace"]; !ok {
				meta["namespace"] = req.Namespace
			}
			out = append(out, obj)
		}
	}
	if len(diags) > 0 {
		return nil, diags
	}
	return out, nil
}

func posOf(v cue.Value, fallback string) diag.Pos {
	p := v.Pos()
	if !p.IsValid() {
		return diag.Pos{File: fallback}
	}
	return diag.Pos{File: p.Filename(), Line: p.Line(), Column: p.Column()}
}

// cueDiags turns CUE errors into diagnostics at their positions.
func cueDiags(err error, fallback, subject string) diag.List {
	var out diag.List
	for _, e := range cueerrors.Errors(err) {
		pos := diag.Pos{File: fallback}
		positions := cueerrors.Positions(e)
		if len(positions) > 0 && positions[0].IsValid() {
			p := positions[0]
			pos = diag.Pos{File: p.Filename(), Line: p.Line(), Column: p.Column()}
		}
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		if subject != "" {
			msg = subject + ": " + msg
		}
		out.Add(pos, strings.Join(e.Path(), "."), "%s", msg)
	}
	slices.SortFunc(out, func(a, b diag.Diagnostic) int { return strings.Compare(a.String(), b.String()) })
	return out
}
