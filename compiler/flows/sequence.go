package flows

import (
	"fmt"

	"github.com/knc-dev/knc/compiler/model"
)

// SequenceChannelName names the Channel in front of a Sequence's step,
// as Knative's sequence controller names it; the first is the Sequence's
// ingress.
func SequenceChannelName(sequence string, step int) string {
	return fmt.Sprintf("%s-kn-sequence-%d", sequence, step)
}

// SequenceSubscriptionName names the Subscription that delivers a step's
// Channel to the step.
func SequenceSubscriptionName(sequence string, step int) string {
	return fmt.Sprintf("%s-kn-sequence-%d", sequence, step)
}

// Sequence returns what Knative's sequence controller creates for s: a
// Channel per step, and a Subscription per step from that Channel to the
// step, replying to the next step's Channel, the last one to s's reply.
func Sequence(s *model.Sequence) Generated {
	var g Generated
	ns := s.Metadata.Namespace
	for i := range s.Spec.Steps {
		g.Channels = append(g.Channels, newChannel(ns, SequenceChannelName(s.Metadata.Name, i), s.Spec.ChannelTemplate))
	}
	for i := range s.Spec.Steps {
		step := &s.Spec.Steps[i]
		sub := newSubscription(ns, SequenceSubscriptionName(s.Metadata.Name, i), SequenceChannelName(s.Metadata.Name, i))
		// Knative copies the destination's fields one by one; a step's
		// destination has no others.
		sub.Spec.Subscriber = cloneDestination(&step.Destination)
		sub.Spec.Delivery = cloneDelivery(step.Delivery)
		switch {
		case i < len(s.Spec.Steps)-1:
			sub.Spec.Reply = channelDestination(ns, SequenceChannelName(s.Metadata.Name, i+1))
		case s.Spec.Reply != nil:
			sub.Spec.Reply = cloneDestination(s.Spec.Reply)
		}
		g.Subscriptions = append(g.Subscriptions, sub)
	}
	return g
}
