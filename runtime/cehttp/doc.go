// Package cehttp is knc's CloudEvents wire codec: it reads and writes
// CloudEvents 1.0 and 0.3 over HTTP (binary and structured content modes)
// and stores them in NATS JetStream messages.
//
// Events are github.com/cloudevents/sdk-go/v2/event values, but the binary
// mode is parsed and written by hand: the SDK's protocol and binding layers
// cost more than the rest of a durable ingress together. The SDK stays the
// reference: tests and a fuzz target check that ReadRequest accepts and
// rejects exactly what the SDK's binding.ToEvent plus Event.Validate accept
// and reject, and decodes the same event. The deliberate differences are:
//
//   - only specversion 1.0 is accepted (the SDK also reads 0.3);
//   - batched mode (application/cloudevents-batch+json) is rejected, as the
//     SDK's ToEvent does;
//   - where the SDK panics (a "Ce-" header naming no attribute, a
//     data_base64 member that is not a string), ReadRequest returns a
//     *ParseError.
//
// Like the SDK, and so like every Knative component, header values are taken
// verbatim: they are not percent-decoded.
//
// Payload bytes are never changed: ReadRequest keeps the body as received,
// and NewRequest writes them unchanged. In structured mode that means a
// payload which JSON cannot carry byte for byte as "data" (JSON that is not a
// single value without surrounding white space, or text that is not UTF-8)
// is sent as "data_base64". An event whose attributes cannot travel in HTTP
// headers unchanged (control characters, or white space at either end that
// a receiver would trim) is sent in structured mode even when binary mode
// was asked for.
//
// NATS messages carry events in binary mode (a 0.3 event with the
// attributes of its 1.0 form and ce-specversion 0.3): attributes as "ce-" headers,
// the payload as the message body. Header values are percent-encoded where
// NATS would alter them (control characters, '%', and white space at either
// end); extension values that are not strings keep their CloudEvents type in
// a knc-ce-types header, so an event read back is equal to the one stored.
//
// This package must not import cuelang.org/go, sigs.k8s.io/kustomize or any
// package of the compiler: it is part of the runtime.
package cehttp
