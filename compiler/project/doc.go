// Package project reads knc.yaml, the project config at the repository
// root: the default namespace, the cluster domain, feature flags, external
// references, excluded paths and runtime settings. Its schema is #Config in
// schema/config.cue.
//
// This package must not import client-go or the runtime.
package project
