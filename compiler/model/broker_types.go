package model

import "github.com/knc-dev/knc/internal/knative/spec"

// Broker collects events and hands them to its Triggers.
type Broker struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta    `json:"metadata"`
	Spec     BrokerSpec    `json:"spec,omitempty" knc:"optional"`
	Status   *BrokerStatus `json:"status,omitempty"`
}

// BrokerSpec is a Broker's desired state.
type BrokerSpec = spec.BrokerSpec

// BrokerStatus is a Broker's observed state.
type BrokerStatus struct {
	Status            `json:",inline"`
	Address           *Addressable  `json:"address,omitempty"`
	Addresses         []Addressable `json:"addresses,omitempty"`
	DeadLetterSinkURI string        `json:"deadLetterSinkUri,omitempty"`
}

// BrokerClassAnnotation selects a Broker's implementation.
const BrokerClassAnnotation = "eventing.knative.dev/broker.class"
