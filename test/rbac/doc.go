// Package rbac checks, against a real kube-apiserver, that the runtime's
// generated RBAC lets it read Brokers, Triggers, Channels and
// Subscriptions and patch their status, and nothing else: no write of any
// spec by any verb, no object created or deleted, no Secret read, no
// binding of more rights. The rules are those knc build writes for the
// quickstart, in each of the runtime's workload forms.
package rbac
