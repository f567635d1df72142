// Package golden holds the golden tests of knc build: each
// testdata/NAME.txtar holds input manifests under input/ and the files knc
// build writes for them under output/ (or the diagnostics it reports, in
// a file named diagnostics). The test fails on any difference, so a
// golden file can only change together with the code that produces it.
//
// Regenerate with KNC_UPDATE=1 go test ./golden/ (make golden), never by
// hand, and review the diff.
//
// This package has no code besides its tests.
package golden
