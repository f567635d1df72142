package model

import "github.com/knc-dev/knc/internal/knative/spec"

// Subscription delivers the events of a Channel to a subscriber.
type Subscription struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta          `json:"metadata"`
	Spec     SubscriptionSpec    `json:"spec"`
	Status   *SubscriptionStatus `json:"status,omitempty"`
}

// ChannelKey returns the key of the Channel the Subscription reads from:
// in the namespace spec.channel names, or else in the Subscription's own.
func (s *Subscription) ChannelKey() Key {
	ch := s.Spec.Channel
	ns := ch.Namespace
	if ns == "" {
		ns = s.Metadata.Namespace
	}
	return Key{Group: Group(ch.APIVersion), Kind: ch.Kind, Namespace: ns, Name: ch.Name}
}

// SubscriptionSpec is a Subscription's desired state.
type SubscriptionSpec = spec.SubscriptionSpec

// SubscriptionStatus is a Subscription's observed state.
type SubscriptionStatus struct {
	Status               `json:",inline"`
	PhysicalSubscription *PhysicalSubscription `json:"physicalSubscription,omitempty"`
}

// PhysicalSubscription holds a Subscription's resolved addresses.
type PhysicalSubscription struct {
	SubscriberURI     string `json:"subscriberUri,omitempty"`
	SubscriberCACerts string `json:"subscriberCACerts,omitempty"`
	ReplyURI          string `json:"replyUri,omitempty"`
	ReplyCACerts      string `json:"replyCACerts,omitempty"`
	DeadLetterSinkURI string `json:"deadLetterSinkUri,omitempty"`
}
