// Command knc validates, compiles and runs Knative Eventing manifests.
package main

import (
	"os"

	"github.com/knc-dev/knc/internal/cli"
)

func main() { os.Exit(cli.Main()) }
