// Package natsserver runs the NATS server with JetStream that knc's runtime
// embeds, and connects to it in-process.
//
// The server keeps its JetStream file store under a data directory of its own
// and opens no TCP port unless asked to, so a local runtime needs nothing
// installed and exposes nothing but its HTTP listener. Connections made with
// Connect use the in-process pipe, not the network.
//
// With Options.Cluster the server is one node of a NATS cluster: its routes
// connect it to the other nodes (the pods of a StatefulSet), and JetStream
// replicates the streams created with more than one replica across them.
// JetStream API requests made while the cluster has no metadata leader get
// no answer, so clients bound each request and retry.
//
// This package must not import the compiler (github.com/knc-dev/knc/compiler/...),
// cuelang.org/go or sigs.k8s.io/kustomize, and knows nothing about Knative:
// streams and consumers are set up by the engine.
package natsserver
