// Package soak holds knc's soak benchmark: the real knc binary under half
// of the load it can take, for a long time (ten minutes by default, set by
// KNC_SOAK_DURATION), sampling the runtime's resident memory and
// goroutines. Both must stay flat, and every accepted event must be
// delivered. BenchmarkSoakDiskFull fills and frees the data volume of a
// runtime under load, round after round: it must take and deliver events
// again within two seconds of each freeing. They are benchmarks, run by
// `make soak`, never by `make test`.
package soak
