package live

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/internal/knative"
)

// Status is the state of the Knative objects read, as a forest: each
// Broker with its Triggers, each Channel with its Subscriptions, then the
// Sequences, Parallels and sources.
type Status struct {
	// Context names the kubeconfig context the objects were read from.
	Context string `json:"context,omitempty"`
	// Ready is true when every object is Ready=True.
	Ready bool `json:"ready"`
	// NotReady counts the objects that are not, Total all of them.
	NotReady int      `json:"notReady"`
	Total    int      `json:"total"`
	Objects  []Object `json:"objects"`
}

// Object is one Knative object and the state its Ready condition says.
type Object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	// Ready is the status of the Ready condition: True, False or
	// Unknown; "" when the object has none yet.
	Ready   string `json:"ready"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Created is the object's creationTimestamp; the text form shows its
	// age.
	Created *time.Time `json:"created,omitempty"`
	// Address is status.address.url of a Broker, Channel, Sequence or
	// Parallel; SinkURI status.sinkUri of a source.
	Address string `json:"address,omitempty"`
	SinkURI string `json:"sinkUri,omitempty"`
	// SubscriberURI is where a Trigger or Subscription delivers:
	// status.subscriberUri, or status.physicalSubscription.subscriberUri.
	SubscriberURI string `json:"subscriberUri,omitempty"`
	// ObservedGeneration and Generation differ while the status is for
	// an older spec.
	Generation         int64 `json:"generation,omitempty"`
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Missing is set for an object of the build the cluster does not
	// have.
	Missing bool `json:"missing,omitempty"`
	// Children are a Broker's Triggers or a Channel's Subscriptions.
	Children []Object `json:"children,omitempty"`

	// parent is the Broker of a Trigger or the Channel of a
	// Subscription, by the object's spec.
	parent parent
}

// IsReady reports whether the object is Ready=True.
func (o *Object) IsReady() bool { return !o.Missing && o.Ready == "True" }

// Ref names an object of the build that a status is limited to.
type Ref struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// RefOf names a model object.
func RefOf(k model.Key) Ref {
	return Ref{Group: k.Group, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name}
}

// Scope says which objects a status reads.
type Scope struct {
	// AllNamespaces reads every namespace; else Namespaces.
	AllNamespaces bool
	Namespaces    []string
	// Objects, when set, limits the status to these objects, such as
	// the Knative objects of a build: the namespaces read are theirs,
	// and an object the cluster lacks is reported Missing.
	Objects []Ref
	// parents are the Brokers and Channels of the Triggers and
	// Subscriptions among Objects, for placing one the cluster lacks.
	parents map[Ref]parent
}

// statusKind is a kind whose status knc reads.
type statusKind struct {
	group, kind, resource string
}

func (k statusKind) gvr() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: k.group, Version: knative.Version, Resource: k.resource}
}

// statusKinds are the kinds a status reads, in the order it shows them.
// The kinds a cluster does not serve (no sources or flows installed) are
// passed over.
var statusKinds = []statusKind{
	{knative.GroupEventing, knative.KindBroker, "brokers"},
	{knative.GroupEventing, knative.KindTrigger, "triggers"},
	{knative.GroupMessaging, knative.KindChannel, "channels"},
	{knative.GroupMessaging, knative.KindSubscription, "subscriptions"},
	{model.GroupFlows, model.KindSequence, "sequences"},
	{model.GroupFlows, model.KindParallel, "parallels"},
	{model.GroupSources, model.KindPingSource, "pingsources"},
	{model.GroupSources, model.KindApiServerSource, "apiserversources"},
	{model.GroupSources, model.KindContainerSource, "containersources"},
	{model.GroupSources, model.KindSinkBinding, "sinkbindings"},
}

func kindRank(kind string) int {
	for i, k := range statusKinds {
		if k.kind == kind {
			return i
		}
	}
	return len(statusKinds)
}

// BuildScope is the scope of a build's status: the Knative objects of
// every deploy unit, with the Broker of each Trigger and the Channel of
// each Subscription, so that one the cluster lacks is shown where it
// belongs.
func BuildScope(res *compiler.Result) Scope {
	seen := map[Ref]bool{}
	scope := Scope{parents: map[Ref]parent{}}
	for _, e := range res.Set.Entries {
		if e.Object == nil || kindRank(e.Key.Kind) == len(statusKinds) {
			continue
		}
		r := RefOf(e.Key)
		if seen[r] {
			continue
		}
		seen[r] = true
		scope.Objects = append(scope.Objects, r)
		switch o := e.Object.(type) {
		case *model.Trigger:
			scope.parents[r] = parent{knative.KindBroker, o.Spec.Broker}
		case *model.Subscription:
			if o.Spec.Channel.Kind == knative.KindChannel {
				scope.parents[r] = parent{knative.KindChannel, o.Spec.Channel.Name}
			}
		}
	}
	return scope
}
