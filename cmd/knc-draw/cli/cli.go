// Package cli is knc-draw's command line: it reads a drawing in DOT on
// standard input and writes it laid out, as SVG or PNG, on standard output.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/knc-dev/knc/internal/safeio"
	"github.com/knc-dev/knc/internal/topology/layout"
)

// MaxInputBytes bounds the DOT read: knc hands over only drawings within
// topology's layout limits, whose DOT is far smaller.
const MaxInputBytes = 64 << 20

// Main runs knc-draw with os.Args and returns the process exit code.
func Main() int {
	return run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("knc-draw", flag.ContinueOnError)
	flags.SetOutput(stderr)
	format := flags.String("T", "svg", "output `format`: svg or png")
	flags.Usage = func() {
		fmt.Fprintf(stderr, `usage: knc-draw [-T svg|png] < drawing.dot > drawing.svg

knc-draw lays out a drawing that knc wrote in DOT with Graphviz's dot,
which runs inside it as WebAssembly. knc graph -o svg and -o png, and the
live page of knc run, start it; it is seldom run by hand:

  knc graph -o dot . | knc-draw -T svg > topology.svg

`)
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "knc-draw: unexpected argument %q: the drawing is read from standard input\n", flags.Arg(0))
		return 2
	}
	f := layout.Format(*format)
	if f != layout.SVG && f != layout.PNG {
		fmt.Fprintf(stderr, "knc-draw: -T %q: want svg or png\n", *format)
		return 2
	}
	dot, err := safeio.ReadAll(stdin, "standard input", MaxInputBytes)
	if errors.Is(err, safeio.ErrTooLarge) {
		fmt.Fprintf(stderr, "knc-draw: %v; draw a part of the topology\n", err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "knc-draw: reading standard input: %v\n", err)
		return 2
	}
	if err := layout.LayOutDOT(stdout, dot, f); err != nil {
		fmt.Fprintf(stderr, "knc-draw: %v\n", err)
		return 1
	}
	return 0
}
