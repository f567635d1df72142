// Package metrics holds the data plane's Prometheus metrics: those of each
// Broker and Channel (events accepted, delivered, retried, dead-lettered,
// dropped, and the durations of attempts and deliveries), and the
// accounting of each Trigger and Subscription, whose counters add up once
// nothing is pending (accounting.go). Each is bound to its labels once per
// plan, so that the hot path does no label lookups.
//
// This package must not import the other runtime packages but
// internal/routing.
package metrics
