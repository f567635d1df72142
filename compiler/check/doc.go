// Package check validates loaded documents and builds the model: each object
// against its schema, then the whole set for duplicates, references,
// features and event loops. Every problem becomes a positioned diagnostic,
// and all of them are reported in one run.
//
// This package must not import client-go or the runtime's engine.
package check
