package schema

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/parser"
)

//go:embed *.cue
var files embed.FS

// ConfigFile is the file of #Config, the schema of knc.yaml.
const ConfigFile = "config.cue"

// Kinds maps a Knative kind to its definition.
var Kinds = map[string]string{
	"Broker":       "#Broker",
	"Trigger":      "#Trigger",
	"Channel":      "#Channel",
	"Subscription": "#Subscription",

	"PingSource":      "#PingSource",
	"ApiServerSource": "#ApiServerSource",
	"ContainerSource": "#ContainerSource",
	"SinkBinding":     "#SinkBinding",
	"Sequence":        "#Sequence",
	"Parallel":        "#Parallel",
}

// Files returns the embedded CUE files, sorted by name.
func Files() ([]string, map[string][]byte, error) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, nil, fmt.Errorf("reading embedded schema: %w", err)
	}
	var names []string
	data := map[string][]byte{}
	for _, e := range entries {
		b, err := files.ReadFile(e.Name())
		if err != nil {
			return nil, nil, fmt.Errorf("reading embedded schema: %w", err)
		}
		names = append(names, e.Name())
		data[e.Name()] = b
	}
	sort.Strings(names)
	return names, data, nil
}

// Compile builds the schema package in ctx. A cue.Context is not safe for
// concurrent use, so concurrent users compile once per context.
func Compile(ctx *cue.Context) (cue.Value, error) {
	names, data, err := Files()
	if err != nil {
		return cue.Value{}, err
	}
	inst := build.NewContext().NewInstance("schema", nil)
	for _, name := range names {
		f, err := parser.ParseFile("schema/"+name, data[name], parser.ParseComments)
		if err != nil {
			return cue.Value{}, fmt.Errorf("parsing embedded schema: %w", err)
		}
		if err := inst.AddSyntax(f); err != nil {
			return cue.Value{}, fmt.Errorf("adding embedded schema: %w", err)
		}
	}
	v := ctx.BuildInstance(inst)
	if err := v.Err(); err != nil {
		return cue.Value{}, fmt.Errorf("compiling embedded schema: %w", err)
	}
	return v, nil
}

var _ = ast.NewIdent
