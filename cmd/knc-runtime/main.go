// Command knc-runtime serves the routes knc build compiled, in a cluster:
// the command of knc's runtime image, knc runtime without the compiler.
package main

import (
	"os"

	// The runtime image has no CA bundle of its own: the roots the
	// runtime trusts when the system has none (HTTPS subscribers, an
	// external NATS) are built in.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/knc-dev/knc/runtime/command"
)

func main() { os.Exit(command.Main()) }
