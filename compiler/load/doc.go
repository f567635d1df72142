// Package load turns files into documents that keep their source positions:
// YAML (multi-document streams included), JSON and CUE, from files or
// directories walked recursively in lexical order.
//
// It also decodes a document into a typed value, reporting every unknown
// field, missing field and type mismatch with its position, rather than
// stopping at the first.
//
// This package must not import client-go or the runtime.
package load
