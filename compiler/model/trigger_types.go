package model

// Trigger asks for the events of a Broker that pass a filter.
type Trigger struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta     `json:"metadata"`
	Spec     TriggerSpec    `json:"spec"`
	Status   *TriggerStatus `json:"status,omitempty"`
}

// TriggerSpec is a Trigger's desired state.
type TriggerSpec struct {
	Broker     string                   `json:"broker,omitempty"`
	BrokerRef  *KReference              `json:"brokerRef,omitempty"`
	Filter     *TriggerFilter           `json:"filter,omitempty"`
	Filters    []SubscriptionsAPIFilter `json:"filters,omitempty"`
	Subscriber Destination              `json:"subscriber"`
	Delivery   *DeliverySpec            `json:"delivery,omitempty"`
}

// Annotations of a Trigger that Knative's admission checks.
const (
	// DependencyAnnotation holds a JSON object reference the Trigger
	// waits for.
	DependencyAnnotation = "knative.dev/dependency"
	// InjectionAnnotation asks for the namespace's default Broker.
	InjectionAnnotation = "eventing.knative.dev/injection"
)

// TriggerFilter is the attribute filter: exact values, "" for any value.
type TriggerFilter struct {
	Attributes map[string]string `json:"attributes,omitempty"`
}

// SubscriptionsAPIFilter is one entry of spec.filters, in exactly one dialect.
type SubscriptionsAPIFilter struct {
	Exact  map[string]string        `json:"exact,omitempty"`
	Prefix map[string]string        `json:"prefix,omitempty"`
	Suffix map[string]string        `json:"suffix,omitempty"`
	All    []SubscriptionsAPIFilter `json:"all,omitempty"`
	Any    []SubscriptionsAPIFilter `json:"any,omitempty"`
	Not    *SubscriptionsAPIFilter  `json:"not,omitempty"`
	CESQL  *string                  `json:"cesql,omitempty"`
}

// TriggerStatus is a Trigger's observed state.
type TriggerStatus struct {
	Status            `json:",inline"`
	SubscriberURI     string `json:"subscriberUri,omitempty"`
	SubscriberCACerts string `json:"subscriberCACerts,omitempty"`
	DeadLetterSinkURI string `json:"deadLetterSinkUri,omitempty"`
}
