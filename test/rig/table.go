package rig

import (
	"time"

	"github.com/knc-dev/knc/internal/routing"
)

// Namespace is where the rig's Brokers and Triggers live.
const Namespace = "rig"

// Table returns a routing table of brokers.
func Table(brokers ...routing.Broker) *routing.Table {
	return &routing.Table{APIVersion: routing.APIVersion, Kind: routing.Kind, Brokers: brokers}
}

// Broker returns a Broker of the rig's namespace.
func Broker(name string, triggers ...routing.Trigger) routing.Broker {
	return routing.Broker{
		Source:   routing.Source{Namespace: Namespace, Name: name},
		Path:     routing.BrokerPath(Namespace, name),
		Triggers: triggers,
	}
}

// Trigger returns a Trigger of every event to uri.
func Trigger(name, uri string, d *routing.Delivery) routing.Trigger {
	return routing.Trigger{
		Source:     routing.Source{Namespace: Namespace, Name: name},
		Subscriber: routing.Destination{URI: uri},
		Delivery:   d,
	}
}

// Retrying is a delivery that retries n times, every delay, with a
// timeout per attempt, and dead-letters to sink when it is not "".
func Retrying(n int32, delay, timeout time.Duration, sink string) *routing.Delivery {
	d := &routing.Delivery{
		Retry:         n,
		BackoffPolicy: routing.BackoffLinear,
		BackoffDelay:  routing.Duration(delay),
		Timeout:       routing.Duration(timeout),
	}
	if sink != "" {
		d.DeadLetterSink = &routing.Destination{URI: sink}
	}
	return d
}
