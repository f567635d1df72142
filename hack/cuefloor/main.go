// Command cuefloor links the CUE packages knc links (the evaluator and
// its OpenAPI and JSON Schema encoders) and does nothing else: its start,
// measured by hack/bench-startup.sh, is the least any binary that
// evaluates CUE, as knc validate must, can take.
package main

import (
	"fmt"

	_ "cuelang.org/go/cue/cuecontext"
	_ "cuelang.org/go/encoding/jsonschema"
	_ "cuelang.org/go/encoding/openapi"
)

func main() { fmt.Println("cue linked") }
