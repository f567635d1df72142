// Command knc-draw lays out the drawings of knc graph and of knc run's live
// page with Graphviz. It is a binary of its own because go-graphviz
// compiles its WebAssembly module at every start of a process that links
// it: knc runs knc-draw only when it draws, and can stop it at once.
package main

import (
	"os"

	"github.com/knc-dev/knc/cmd/knc-draw/cli"
)

func main() { os.Exit(cli.Main()) }
