package plugins

import (
	"path"

	"github.com/knc-dev/knc/compiler/backend"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/internal/inputfs"
)

// The interface of a back end is the compiler's (compiler/backend); these
// names keep it readable from the package that implements it.
type (
	Object       = backend.Object
	Request      = backend.Request
	Claimed      = backend.Claimed
	Plugin       = backend.Plugin
	Claims       = backend.Claims
	ChannelKind  = backend.ChannelKind
	Registry     = backend.Registry
	TableEncoder = backend.TableEncoder
)

// EncodeTable encodes a routing table as a ConfigMap holds it; see
// backend.EncodeTable.
var EncodeTable = backend.EncodeTable

// NewTableEncoder encodes a table for a build; see backend.NewTableEncoder.
var NewTableEncoder = backend.NewTableEncoder

// NewRegistry returns a registry holding knc's own plugin.
func NewRegistry(knc KncOptions) *Registry {
	r := backend.NewRegistry()
	if err := r.Register(NewKnc(knc)); err != nil {
		panic("plugins: registering knc's own plugin: " + err.Error())
	}
	return r
}

// Backends is the back ends of a build, as compiler/render asks for them
// (a backend.Provider): knc's own plugin, running b.Image, and the
// project's CUE plugins under b.Root. A project plugin that claims what
// another claims is a diagnostic at the plugin's directory.
func Backends(b backend.Build) (*Registry, diag.List, error) {
	reg := NewRegistry(KncOptions{Image: b.Image})
	if b.Root == "" {
		return reg, nil, nil
	}
	ps, diags, err := LoadCUE(inputfs.Or(b.FS), b.Root, b.CUELimits)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range ps {
		if err := reg.Register(p); err != nil {
			diags.Add(diag.Pos{File: path.Join(b.Root, Dir, p.Name())}, "", "%v", err)
		}
	}
	return reg, diags, nil
}
