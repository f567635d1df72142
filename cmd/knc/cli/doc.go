// Package cli holds knc's command tree: one file per subcommand, each doing
// flag parsing and output formatting only. The work itself lives in the
// compiler and runtime packages.
//
// The tree is built fresh for every call of Main, so that tests can run the
// command many times in one process without state leaking between runs.
package cli
