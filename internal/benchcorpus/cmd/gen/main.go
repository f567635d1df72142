// Command gen writes a benchmark corpus: gen DIR OBJECTS [POLICYDIR]. With
// POLICYDIR, it also writes there the five policies the corpus satisfies.
//
// It is built only when named as a file (go run
// ./internal/benchcorpus/cmd/gen/main.go), so that go install ./..., which
// pre-commit runs to install its hooks, installs knc alone.

//go:build ignore

package main

import (
	"os"
	"strconv"

	"github.com/knc-dev/knc/internal/benchcorpus"
)

func main() {
	n, _ := strconv.Atoi(os.Args[2])
	if err := benchcorpus.WriteByKind(os.Args[1], benchcorpus.Shape{Objects: n}); err != nil {
		panic(err)
	}
	if len(os.Args) > 3 {
		if err := benchcorpus.WritePolicies(os.Args[3]); err != nil {
			panic(err)
		}
	}
}
