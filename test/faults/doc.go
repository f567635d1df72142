// Package faults holds knc's fault tests: they run the real knc binary under
// load while something goes wrong (subscribers that fail at random, the
// runtime killed with SIGKILL, a full JetStream store, a dead-letter sink
// that is down, the routing table reloaded), and check that every event
// answered 202 is delivered or dead-lettered: none is lost. Each test logs
// one FIGURES line (sent, accepted, delivered, dead-lettered, duplicates,
// lost) and finishes within about a minute.
//
// The tests are black-box: they import the routing table format and the
// test rig, never the engine or the compiler.
package faults
