package model

// Broker collects events and hands them to its Triggers.
type Broker struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta    `json:"metadata"`
	Spec     BrokerSpec    `json:"spec,omitempty" knc:"optional"`
	Status   *BrokerStatus `json:"status,omitempty"`
}

// BrokerSpec is a Broker's desired state.
type BrokerSpec struct {
	Config   *KReference   `json:"config,omitempty"`
	Delivery *DeliverySpec `json:"delivery,omitempty"`
}

// BrokerStatus is a Broker's observed state.
type BrokerStatus struct {
	Status            `json:",inline"`
	Address           *Addressable  `json:"address,omitempty"`
	Addresses         []Addressable `json:"addresses,omitempty"`
	DeadLetterSinkURI string        `json:"deadLetterSinkUri,omitempty"`
}

// BrokerClassAnnotation selects a Broker's implementation.
const BrokerClassAnnotation = "eventing.knative.dev/broker.class"
