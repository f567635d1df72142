// Command knc validates, compiles and runs Knative Eventing manifests.
package main

import (
	"os"

	// The runtime image has no CA bundle of its own: the roots knc trusts
	// when the system has none (HTTPS subscribers, an external NATS) are
	// built in.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/knc-dev/knc/cmd/knc/cli"
)

func main() { os.Exit(cli.Main()) }
