// Package model holds typed Knative Eventing objects as knc reads them from a
// repository: their types, defaults and per-object validation, one file per
// concern and kind, as Knative's own API packages do.
//
// Validation here covers one object at a time and mirrors the CUE schema in
// schema/, which stays the source of truth: a differential test runs both on
// the same corpus. Checks across objects live in compiler/check.
//
// This package must not import cuelang.org/go, client-go or the runtime.
package model
