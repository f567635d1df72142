// Package soak holds knc's soak benchmark: the real knc binary under half
// of the load it can take, for a long time (ten minutes by default, set by
// KNC_SOAK_DURATION), sampling the runtime's resident memory and
// goroutines. Both must stay flat, and every accepted event must be
// delivered. It is a benchmark, run by `make soak`, never by `make test`.
package soak
