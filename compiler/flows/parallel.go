package flows

import (
	"fmt"

	"github.com/knc-dev/knc/compiler/model"
)

// ParallelChannelName names the Channel in front of a Parallel: its
// ingress, which every branch's filter Subscription reads.
func ParallelChannelName(parallel string) string {
	return fmt.Sprintf("%s-kn-parallel", parallel)
}

// ParallelBranchChannelName names the Channel in front of a branch's
// subscriber, which its filter replies to.
func ParallelBranchChannelName(parallel string, branch int) string {
	return fmt.Sprintf("%s-kn-parallel-%d", parallel, branch)
}

// ParallelFilterSubscriptionName names the Subscription from the ingress
// Channel to a branch's filter.
func ParallelFilterSubscriptionName(parallel string, branch int) string {
	return fmt.Sprintf("%s-kn-parallel-filter-%d", parallel, branch)
}

// ParallelSubscriptionName names the Subscription from a branch's Channel
// to its subscriber.
func ParallelSubscriptionName(parallel string, branch int) string {
	return fmt.Sprintf("%s-kn-parallel-%d", parallel, branch)
}

// Parallel returns what Knative's parallel controller creates for p: the
// ingress Channel, a Channel per branch, and per branch a filter
// Subscription and a subscriber Subscription.
//
// The filter Subscription reads the ingress Channel. With a filter it
// delivers to the filter and sends the filter's reply to the branch's
// Channel, so that an event the filter answers with no event goes no
// further; without one it delivers to the branch's Channel. The subscriber
// Subscription reads the branch's Channel, delivers to the subscriber with
// the branch's delivery, and replies to the branch's reply, else to p's.
func Parallel(p *model.Parallel) Generated {
	var g Generated
	ns, name := p.Metadata.Namespace, p.Metadata.Name
	g.Channels = append(g.Channels, newChannel(ns, ParallelChannelName(name), p.Spec.ChannelTemplate))
	for i := range p.Spec.Branches {
		g.Channels = append(g.Channels, newChannel(ns, ParallelBranchChannelName(name, i), p.Spec.ChannelTemplate))
	}
	for i := range p.Spec.Branches {
		b := &p.Spec.Branches[i]
		filter := newSubscription(ns, ParallelFilterSubscriptionName(name, i), ParallelChannelName(name))
		if b.Filter == nil {
			filter.Spec.Subscriber = channelDestination(ns, ParallelBranchChannelName(name, i))
		} else {
			filter.Spec.Subscriber = cloneDestination(b.Filter)
			filter.Spec.Reply = channelDestination(ns, ParallelBranchChannelName(name, i))
		}
		g.Subscriptions = append(g.Subscriptions, filter)
	}
	for i := range p.Spec.Branches {
		b := &p.Spec.Branches[i]
		sub := newSubscription(ns, ParallelSubscriptionName(name, i), ParallelBranchChannelName(name, i))
		sub.Spec.Subscriber = cloneDestination(b.Subscriber)
		sub.Spec.Delivery = cloneDelivery(b.Delivery)
		switch {
		case b.Reply != nil:
			sub.Spec.Reply = cloneDestination(b.Reply)
		case p.Spec.Reply != nil:
			sub.Spec.Reply = cloneDestination(p.Spec.Reply)
		}
		g.Subscriptions = append(g.Subscriptions, sub)
	}
	return g
}
