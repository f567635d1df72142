// Package argocd holds the Argo CD health check knc ships for its four
// kinds, as the Lua script Argo CD runs for custom resources, and the
// argocd-cm patch that installs it (knc build --argocd-health FILE).
//
// The script reads what knc's runtime writes to /status: an object whose
// status.observedGeneration is behind metadata.generation, or that has no
// Ready condition yet, is Progressing; Ready=True is Healthy; Ready=False is
// Degraded (NotCompiled, an unresolved reference, a missing Broker or
// Channel); Ready=Unknown is Progressing. The message is the Ready
// condition's reason and message.
//
// Package argocdtest runs the script as Argo CD does, with gopher-lua, for
// tests. This package must not import the runtime's engine.
package argocd
