package cluster

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/runtime/status"
)

// Group versions of the four kinds.
var (
	EventingV1  = schema.GroupVersion{Group: knative.GroupEventing, Version: knative.Version}
	MessagingV1 = schema.GroupVersion{Group: knative.GroupMessaging, Version: knative.Version}
	SourcesV1   = schema.GroupVersion{Group: knative.GroupSources, Version: knative.Version}
	FlowsV1     = schema.GroupVersion{Group: knative.GroupFlows, Version: knative.Version}
)

// PingSourcesResource is the resource of PingSources, whose status the
// runtime writes when its table has PingSources.
var PingSourcesResource = SourcesV1.WithResource("pingsources")

// Resources of the four kinds.
var (
	BrokersResource       = resource(knative.KindBroker)
	TriggersResource      = resource(knative.KindTrigger)
	ChannelsResource      = resource(knative.KindChannel)
	SubscriptionsResource = resource(knative.KindSubscription)
	SequencesResource     = resource(knative.KindSequence)
	ParallelsResource     = resource(knative.KindParallel)
)

func resource(kind string) schema.GroupVersionResource {
	k, _ := knative.Lookup(kind)
	return schema.GroupVersionResource{Group: k.Group, Version: knative.Version, Resource: k.Plural}
}

// watchedKind is a kind the runtime watches, with its resource.
type watchedKind struct {
	kind     string
	resource schema.GroupVersionResource
}

// kinds lists the four kinds and the flows with their resources, in the order the
// runtime reports them.
var kinds = []watchedKind{
	{knative.KindBroker, BrokersResource},
	{knative.KindTrigger, TriggersResource},
	{knative.KindChannel, ChannelsResource},
	{knative.KindSubscription, SubscriptionsResource},
	{knative.KindSequence, SequencesResource},
	{knative.KindParallel, ParallelsResource},
}

// LiveObject is the partial schema of the four kinds that the runtime writes:
// metadata, to name the object and read its generation, and the status
// fields knc reports. It has no spec, so a patch computed from two Objects
// can only touch the status.
type LiveObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            LiveStatus `json:"status"`
}

// LiveStatus holds the status fields of all four kinds; each kind sets its own.
type LiveStatus struct {
	ObservedGeneration int64           `json:"observedGeneration,omitempty"`
	Conditions         []LiveCondition `json:"conditions,omitempty"`
	// Address is set for Brokers and Channels.
	Address *Addressable `json:"address,omitempty"`
	// SubscriberURI is set for Triggers.
	SubscriberURI     string `json:"subscriberUri,omitempty"`
	DeadLetterSinkURI string `json:"deadLetterSinkUri,omitempty"`
	// PhysicalSubscription is set for Subscriptions.
	PhysicalSubscription *status.PhysicalSubscription `json:"physicalSubscription,omitempty"`
	// Subscribers and Channel are set for Channels.
	Subscribers []status.SubscriberStatus `json:"subscribers,omitempty"`
	Channel     *KReference               `json:"channel,omitempty"`
	// SinkURI and CloudEventAttributes are set for PingSources.
	SinkURI              string                        `json:"sinkUri,omitempty"`
	CloudEventAttributes []status.CloudEventAttributes `json:"ceAttributes,omitempty"`
	// ChannelStatuses and SubscriptionStatuses are set for Sequences,
	// IngressChannelStatus and BranchStatuses for Parallels.
	ChannelStatuses      []status.ChannelStatus      `json:"channelStatuses,omitempty"`
	SubscriptionStatuses []status.SubscriptionStatus `json:"subscriptionStatuses,omitempty"`
	IngressChannelStatus *status.ChannelStatus       `json:"ingressChannelStatus,omitempty"`
	BranchStatuses       []status.BranchStatus       `json:"branchStatuses,omitempty"`
}

// LiveCondition is Knative's apis.Condition, as the API server holds it.
type LiveCondition struct {
	Type     string `json:"type"`
	Status   string `json:"status"`
	Severity string `json:"severity,omitempty"`
	// LastTransitionTime is RFC 3339. It is a string rather than a
	// metav1.Time so that a malformed value written by someone else does
	// not keep the runtime from reading the object.
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
}

// Addressable is duckv1.Addressable.
type Addressable struct {
	URL string `json:"url,omitempty"`
}

// KReference is duckv1.KReference.
type KReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
}

// resourceOf returns the resource of a kind the runtime writes.
func resourceOf(kind string) (schema.GroupVersionResource, error) {
	if kind == knative.KindPingSource {
		return PingSourcesResource, nil
	}
	for _, k := range kinds {
		if k.kind == kind {
			return k.resource, nil
		}
	}
	return schema.GroupVersionResource{}, fmt.Errorf("unknown kind %q", kind)
}

// fromUnstructured converts a live object to its partial schema.
func fromUnstructured(kind string, u *unstructured.Unstructured) (*LiveObject, error) {
	obj := &LiveObject{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil, fmt.Errorf("reading %s %s/%s: %w", kind, u.GetNamespace(), u.GetName(), err)
	}
	return obj, nil
}

// DeepCopyInto copies o into out.
func (o *LiveObject) DeepCopyInto(out *LiveObject) {
	out.TypeMeta = o.TypeMeta
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	o.Status.DeepCopyInto(&out.Status)
}

// DeepCopyInto copies s into out.
func (s *LiveStatus) DeepCopyInto(out *LiveStatus) {
	*out = *s
	out.Conditions = append([]LiveCondition(nil), s.Conditions...)
	out.Subscribers = append([]status.SubscriberStatus(nil), s.Subscribers...)
	out.CloudEventAttributes = append([]status.CloudEventAttributes(nil), s.CloudEventAttributes...)
	if s.Address != nil {
		a := *s.Address
		out.Address = &a
	}
	if s.PhysicalSubscription != nil {
		p := *s.PhysicalSubscription
		out.PhysicalSubscription = &p
	}
	if s.Channel != nil {
		c := *s.Channel
		out.Channel = &c
	}
	out.ChannelStatuses = append([]status.ChannelStatus(nil), s.ChannelStatuses...)
	out.SubscriptionStatuses = append([]status.SubscriptionStatus(nil), s.SubscriptionStatuses...)
	out.BranchStatuses = append([]status.BranchStatus(nil), s.BranchStatuses...)
	if s.IngressChannelStatus != nil {
		c := *s.IngressChannelStatus
		out.IngressChannelStatus = &c
	}
}

// DeepCopyObject implements runtime.Object.
func (o *LiveObject) DeepCopyObject() runtime.Object {
	out := &LiveObject{}
	o.DeepCopyInto(out)
	return out
}

// GetConditions implements statuspatch.Getter. A Knative condition has no
// observedGeneration of its own: the status's stands for all of them.
func (o *LiveObject) GetConditions() []metav1.Condition {
	out := make([]metav1.Condition, 0, len(o.Status.Conditions))
	for _, c := range o.Status.Conditions {
		mc := metav1.Condition{
			Type:               c.Type,
			Status:             metav1.ConditionStatus(c.Status),
			ObservedGeneration: o.Status.ObservedGeneration,
			Reason:             c.Reason,
			Message:            c.Message,
		}
		if t, err := time.Parse(time.RFC3339, c.LastTransitionTime); err == nil {
			mc.LastTransitionTime = metav1.NewTime(t)
		}
		out = append(out, mc)
	}
	return out
}

// SetConditions implements statuspatch.Setter. The severity of a condition
// that keeps its type is kept; a new condition is of error severity.
func (o *LiveObject) SetConditions(conds []metav1.Condition) {
	severity := map[string]string{}
	for _, c := range o.Status.Conditions {
		severity[c.Type] = c.Severity
	}
	out := make([]LiveCondition, 0, len(conds))
	for _, c := range conds {
		kc := LiveCondition{
			Type:     c.Type,
			Status:   string(c.Status),
			Severity: severity[c.Type],
			Reason:   c.Reason,
			Message:  c.Message,
		}
		if !c.LastTransitionTime.IsZero() {
			kc.LastTransitionTime = c.LastTransitionTime.UTC().Format(time.RFC3339)
		}
		out = append(out, kc)
	}
	o.Status.Conditions = out
}

// ownedConditions are the condition types knc's runtime writes: on a
// conflict with another writer, its value wins.
var ownedConditions = []string{
	status.ConditionReady,
	status.ConditionAddressable,
	status.ConditionIngressReady,
	status.ConditionBrokerReady,
	status.ConditionSubscriberResolved,
	status.ConditionDeadLetterSinkResolved,
	status.ConditionSubscribersReady,
	status.ConditionChannelReady,
	status.ConditionReferencesResolved,
	status.ConditionSinkProvided,
	status.ConditionDeployed,
	status.ConditionChannelsReady,
	status.ConditionSubscriptionsReady,
}
