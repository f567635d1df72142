// Package plugins renders the resources that back Brokers and Channels.
// A Broker's class annotation, or a Channel's spec.channelTemplate, selects
// the plugin:
//
//   - knc's own plugin runs class "knc" Brokers and JetStreamChannel and
//     InMemoryChannel Channels on one runtime Deployment per namespace (with
//     its Service, ServiceAccount, RBAC, JetStream volume and settings, and
//     the namespace's routing table in a ConfigMap named by its hash);
//   - a project can add plugins written in CUE under .knc/plugins/NAME,
//     evaluated at build time, with no change to knc (see docs/plugins.md);
//   - any other class or kind (MTChannelBasedBroker, Kafka, KafkaChannel, …)
//     is passed through: emitted unchanged, with no backing resources, for
//     the implementation installed in the cluster.
//
// It is a back end of the compiler: it implements compiler/backend's
// Plugin, and a program hands Backends to compiler/render (as a driver is
// handed to database/sql), which calls each plugin for the Broker classes
// and Channel kinds it claims. The compiler never imports this package,
// and nothing in the runtime does. It stays a top-level directory rather than compiler/plugins, to keep
// the project's layout, in which plugins (docs/plugins.md) sit beside
// compiler, runtime and schema. Being outside compiler/, it can use the
// module's top-level internal packages (internal/parallel,
// internal/knative) but not those under compiler/internal.
//
// This package must not import the runtime's engine or client-go; the
// routing table (internal/routing) is the only runtime package it uses.
package plugins
