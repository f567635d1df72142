// Package backend is what the compiler needs of the back ends that render
// the resources behind Brokers and Channels: the Plugin interface, the
// Registry that maps Broker classes and Channel kinds to plugins, and the
// encoding of the routing table they are handed. The compiler defines it
// and the plugins package implements it, as database/sql defines drivers;
// the caller of compiler/render hands the plugins in (render.Options'
// Backends), so that the compiler never imports its back ends.
package backend

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/internal/cuelimit"
	"github.com/knc-dev/knc/internal/inputfs"
	"github.com/knc-dev/knc/internal/routing"
)

// Object is a Kubernetes object as generic JSON: maps, slices, strings,
// numbers, bools and nil.
type Object = map[string]any

// Request asks a plugin for the backing resources of the Brokers and
// Channels it claims in one namespace.
type Request struct {
	Namespace string
	// Brokers and Channels are the objects of Namespace whose class or
	// channel template the plugin claims, normalised as knc writes them,
	// sorted by name.
	Brokers  []Claimed
	Channels []Claimed
	// Table holds the routes of the Brokers and Channels knc's runtime
	// serves in Namespace; empty for other plugins.
	Table *routing.Table
	// TableJSON is Table encoded by EncodeTable, when the caller has it.
	TableJSON []byte
	// Config is the project's knc.yaml.
	Config *project.Config
}

// Claimed is one Broker or Channel handed to a plugin.
type Claimed struct {
	// Object is the normalised object, as written to the output.
	Object Object
	// Model is the typed object.
	Model model.Object
}

// Plugin renders the resources that back the Brokers of some classes or
// the Channels of some kinds.
type Plugin interface {
	// Name identifies the plugin in file names and messages.
	Name() string
	// Claims says which Broker classes and Channel kinds the plugin renders.
	Claims() Claims
	// Render returns the objects that back req's Brokers and Channels. An
	// object without metadata.namespace lives in req.Namespace. A problem
	// with the plugin's input or its own definition is returned as a
	// diag.List, so that it is reported like any invalid input.
	Render(req *Request) ([]Object, error)
}

// Claims lists what a plugin renders.
type Claims struct {
	BrokerClasses []string
	ChannelKinds  []ChannelKind
}

// ChannelKind is a Channel's spec.channelTemplate apiVersion and kind.
type ChannelKind struct {
	APIVersion string
	Kind       string
}

func (k ChannelKind) String() string { return k.APIVersion + " " + k.Kind }

// Registry maps Broker classes and Channel kinds to plugins. What no plugin
// claims is passed through: emitted unchanged, with no backing resources,
// for the implementation installed in the cluster to run.
type Registry struct {
	plugins  []Plugin
	brokers  map[string]Plugin
	channels map[ChannelKind]Plugin
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{brokers: map[string]Plugin{}, channels: map[ChannelKind]Plugin{}}
}

// Register adds p. A class or kind claimed twice is an error.
func (r *Registry) Register(p Plugin) error {
	c := p.Claims()
	for _, class := range c.BrokerClasses {
		if prev, ok := r.brokers[class]; ok {
			return fmt.Errorf("plugin %s claims Broker class %q, already claimed by plugin %s", p.Name(), class, prev.Name())
		}
	}
	for _, k := range c.ChannelKinds {
		if prev, ok := r.channels[k]; ok {
			return fmt.Errorf("plugin %s claims Channel kind %s, already claimed by plugin %s", p.Name(), k, prev.Name())
		}
	}
	for _, prev := range r.plugins {
		if prev.Name() == p.Name() {
			return fmt.Errorf("two plugins are named %s", p.Name())
		}
	}
	for _, class := range c.BrokerClasses {
		r.brokers[class] = p
	}
	for _, k := range c.ChannelKinds {
		r.channels[k] = p
	}
	r.plugins = append(r.plugins, p)
	slices.SortFunc(r.plugins, func(a, b Plugin) int { return cmp.Compare(a.Name(), b.Name()) })
	return nil
}

// Plugins returns the registered plugins, sorted by name.
func (r *Registry) Plugins() []Plugin { return slices.Clone(r.plugins) }

// ForBroker returns the plugin of a Broker class, or nil to pass it through.
func (r *Registry) ForBroker(class string) Plugin { return r.brokers[class] }

// ForChannel returns the plugin of a Channel kind, or nil to pass it
// through.
func (r *Registry) ForChannel(k ChannelKind) Plugin { return r.channels[k] }

// Build is what a build tells the back ends when it asks for them.
type Build struct {
	// Image is the runtime's container image.
	Image string
	// Root is the project's root directory (that of knc.yaml), where
	// project plugins live; empty loads none.
	Root string
	// FS is what Root is read from; nil means the disk.
	FS inputfs.FS
	// CUELimits bound each evaluation of a project plugin.
	CUELimits cuelimit.Limits
}

// Provider returns the registry of the back ends of one build. Problems
// with a project's plugins are diagnostics; err is for I/O errors and for
// a plugin over b.CUELimits (a *cuelimit.Exceeded).
type Provider func(b Build) (*Registry, diag.List, error)
