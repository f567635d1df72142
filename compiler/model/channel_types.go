package model

import "github.com/knc-dev/knc/internal/knative/spec"

// Channel forwards every event to each of its Subscriptions.
type Channel struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta     `json:"metadata"`
	Spec     ChannelSpec    `json:"spec,omitempty" knc:"optional"`
	Status   *ChannelStatus `json:"status,omitempty"`
}

// ChannelSpec is a Channel's desired state.
type ChannelSpec = spec.ChannelSpec

// ChannelTemplateSpec selects the backing channel implementation.
type ChannelTemplateSpec = spec.ChannelTemplateSpec

// SubscriberSpec is one compiled subscriber of a Channel.
type SubscriberSpec = spec.SubscriberSpec

// ChannelStatus is a Channel's observed state.
type ChannelStatus struct {
	Status            `json:",inline"`
	Address           *Addressable       `json:"address,omitempty"`
	Addresses         []Addressable      `json:"addresses,omitempty"`
	Subscribers       []SubscriberStatus `json:"subscribers,omitempty"`
	Channel           *KReference        `json:"channel,omitempty"`
	DeadLetterSinkURI string             `json:"deadLetterSinkUri,omitempty"`
}

// SubscriberStatus is the state of one subscriber of a Channel.
type SubscriberStatus struct {
	UID                string `json:"uid,omitempty"`
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
	Ready              string `json:"ready" knc:"optional"`
	Message            string `json:"message,omitempty"`
}
