// Package loadgen drives CloudEvents load over HTTP at a runtime and measures
// what comes out: requests per second, CPU time per event, and latency
// percentiles, both of the POST and from the POST to the subscriber.
//
// The client speaks HTTP/1.1 on raw keep-alive connections, one request in
// flight per connection, with requests rendered into a reused buffer: it
// costs a few microseconds of CPU per request, so that on a small machine
// most of the CPU goes to the server being measured rather than to the
// client. The same client drives a runtime and the plain net/http handler it
// is compared with.
//
// Subscriber is the receiving end: an HTTP server on loopback that answers
// 202, counts deliveries per path and measures the latency from the moment
// the load generator sent an event (its "loadsent" extension) to the moment
// it arrives.
//
// This package is test tooling. It imports nothing of knc: it must not
// import the runtime or the compiler, so that it measures them from the
// outside.
package loadgen
