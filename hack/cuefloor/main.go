// Command cuefloor links the CUE packages knc links (the evaluator and
// its OpenAPI and JSON Schema encoders) and does nothing else: its start,
// measured by hack/bench-startup.sh, is the least any binary that
// evaluates CUE, as knc validate must, can take.
//
// It is built only when named as a file (go build ./hack/cuefloor/main.go),
// so that go install ./..., which pre-commit runs to install its hooks,
// installs knc's own binaries alone.

//go:build ignore

package main

import (
	"fmt"

	_ "cuelang.org/go/cue/cuecontext"
	_ "cuelang.org/go/encoding/jsonschema"
	_ "cuelang.org/go/encoding/openapi"
)

func main() { fmt.Println("cue linked") }
