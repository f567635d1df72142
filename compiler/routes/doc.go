// Package routes compiles the model into the routing table the runtime
// serves: the address of every Broker and Channel knc runs, and for each
// Trigger and Subscription its filters, effective delivery options and
// resolved destinations.
//
// Addresses are resolved here wherever the repository holds the answer; a
// reference it cannot resolve is left in the table for the runtime, which
// reads the referent's status.address.url.
//
// This package must not import client-go or the runtime's engine.
package routes
