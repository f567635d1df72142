package model

import (
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/internal/knative"
)

// Object is any of the Knative kinds knc validates: the four core kinds,
// the four core sources and the two flows.
type Object interface {
	GetTypeMeta() TypeMeta
	GetMetadata() *ObjectMeta
	Validate(f Features, namespace string) FieldErrors
	SetDefaults(Defaults)
}

// GetTypeMeta returns the object's apiVersion and kind.
func (t TypeMeta) GetTypeMeta() TypeMeta { return t }

func (b *Broker) GetMetadata() *ObjectMeta       { return &b.Metadata }
func (t *Trigger) GetMetadata() *ObjectMeta      { return &t.Metadata }
func (c *Channel) GetMetadata() *ObjectMeta      { return &c.Metadata }
func (s *Subscription) GetMetadata() *ObjectMeta { return &s.Metadata }

// New returns an empty object of a Knative kind, or nil for other kinds.
func New(apiVersion, kind string) Object {
	switch {
	case apiVersion == knative.EventingV1 && kind == knative.KindBroker:
		return &Broker{}
	case apiVersion == knative.EventingV1 && kind == knative.KindTrigger:
		return &Trigger{}
	case apiVersion == knative.MessagingV1 && kind == knative.KindChannel:
		return &Channel{}
	case apiVersion == knative.MessagingV1 && kind == knative.KindSubscription:
		return &Subscription{}
	case apiVersion == SourcesV1 && kind == KindPingSource:
		return &PingSource{}
	case apiVersion == SourcesV1 && kind == KindApiServerSource:
		return &ApiServerSource{}
	case apiVersion == SourcesV1 && kind == KindContainerSource:
		return &ContainerSource{}
	case apiVersion == SourcesV1 && kind == KindSinkBinding:
		return &SinkBinding{}
	case apiVersion == FlowsV1 && kind == KindSequence:
		return &Sequence{}
	case apiVersion == FlowsV1 && kind == KindParallel:
		return &Parallel{}
	}
	return nil
}

// The API versions and kinds of the sources and flows.
const (
	GroupSources = "sources.knative.dev"
	SourcesV1    = GroupSources + "/v1"
	GroupFlows   = "flows.knative.dev"
	FlowsV1      = GroupFlows + "/v1"

	KindPingSource      = "PingSource"
	KindApiServerSource = "ApiServerSource"
	KindContainerSource = "ContainerSource"
	KindSinkBinding     = "SinkBinding"
	KindSequence        = "Sequence"
	KindParallel        = "Parallel"
)

// Key identifies an object: kind, namespace (after defaulting) and name.
// Kind includes the API group, so a Service of serving.knative.dev and a v1
// Service are different keys.
type Key struct {
	Group     string
	Kind      string
	Namespace string
	Name      string
}

// Group returns the API group of an apiVersion ("" for the core group).
func Group(apiVersion string) string {
	for i := 0; i < len(apiVersion); i++ {
		if apiVersion[i] == '/' {
			return apiVersion[:i]
		}
	}
	return ""
}

func (k Key) String() string {
	return knative.KindLabel(k.Group, k.Kind) + " " + k.Namespace + "/" + k.Name
}

// Entry is one loaded object with the document it came from.
type Entry struct {
	Key Key
	Doc *load.Document
	// Object is the typed Knative object, or nil for other kinds.
	Object Object
	// Duck is the sink and overrides of an object of another kind that
	// is a source by its duck type; nil for every other object.
	Duck *DuckSource
	// Owner is the Sequence or Parallel whose compilation made this
	// Channel or Subscription, as Knative's flows controllers make it;
	// nil for the repository's own objects. A generated entry shares its
	// owner's Doc, so that what is said about it points at the owner.
	Owner *Entry
}

// Generated reports whether the entry was compiled from another object
// rather than read from the repository.
func (e *Entry) Generated() bool { return e.Owner != nil }

// Set is a validated, defaulted set of objects: the model every command
// works from.
type Set struct {
	Brokers       []*Broker
	Triggers      []*Trigger
	Channels      []*Channel
	Subscriptions []*Subscription
	// Sources are the objects that send events to a sink: the four core
	// sources, and the objects of other kinds that knc takes as sources
	// (see DuckSource).
	Sources   []Source
	Sequences []*Sequence
	Parallels []*Parallel
	// Entries holds every object, Knative or not, in load order.
	Entries []*Entry
	// Index finds an object by key.
	Index map[Key]*Entry
}

// KeyOf returns the key of a Knative object.
func KeyOf(o Object) Key {
	tm, m := o.GetTypeMeta(), o.GetMetadata()
	return Key{Group: Group(tm.APIVersion), Kind: tm.Kind, Namespace: m.Namespace, Name: m.Name}
}

// Read counts the objects read from the repository, leaving out those the
// flows stage compiled from its Sequences and Parallels.
func (s *Set) Read() int {
	n := 0
	for _, e := range s.Entries {
		if !e.Generated() {
			n++
		}
	}
	return n
}
