//go:build race

package cluster

// raceEnabled builds the knc subprocess with the race detector when the
// tests themselves run with it.
const raceEnabled = true
