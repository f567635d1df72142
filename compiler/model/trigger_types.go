package model

import (
	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/knative/spec"
)

// Trigger asks for the events of a Broker that pass a filter.
type Trigger struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta     `json:"metadata"`
	Spec     TriggerSpec    `json:"spec"`
	Status   *TriggerStatus `json:"status,omitempty"`
}

// BrokerKey returns the key of the Broker named in spec.broker, in the
// Trigger's namespace; knc routes by spec.broker alone (see Validate).
func (t *Trigger) BrokerKey() Key {
	return Key{Group: knative.GroupEventing, Kind: knative.KindBroker, Namespace: t.Metadata.Namespace, Name: t.Spec.Broker}
}

// TriggerSpec is a Trigger's desired state.
type TriggerSpec = spec.TriggerSpec

// BrokerLabel is the label Knative's defaulting sets on a Trigger to the
// name of its Broker.
const BrokerLabel = "eventing.knative.dev/broker"

// Annotations of a Trigger that Knative's admission checks.
const (
	// DependencyAnnotation holds a JSON object reference the Trigger
	// waits for.
	DependencyAnnotation = "knative.dev/dependency"
	// InjectionAnnotation asks for the namespace's default Broker.
	InjectionAnnotation = "eventing.knative.dev/injection"
)

// TriggerFilter is the attribute filter: exact values, "" for any value.
type TriggerFilter = spec.TriggerFilter

// SubscriptionsAPIFilter is one entry of spec.filters, in exactly one dialect.
type SubscriptionsAPIFilter = spec.SubscriptionsAPIFilter

// TriggerStatus is a Trigger's observed state.
type TriggerStatus struct {
	Status            `json:",inline"`
	SubscriberURI     string `json:"subscriberUri,omitempty"`
	SubscriberCACerts string `json:"subscriberCACerts,omitempty"`
	DeadLetterSinkURI string `json:"deadLetterSinkUri,omitempty"`
}
