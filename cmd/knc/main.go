// Command knc validates, compiles and runs Knative Eventing manifests.
package main

import (
	"os"

	"github.com/knc-dev/knc/cmd/knc/cli"
)

func main() { os.Exit(cli.Main()) }
