// Command startuptime runs a command over and over and prints the median
// of its wall time in milliseconds and of its peak resident memory, read
// from the kernel's account of the child (rusage), for start-up costs too
// small for /usr/bin/time's hundredths of a second.
//
//	go run ./hack/startuptime/main.go -n 21 -label 'knc version' bin/knc version
//
// It is built only when named as a file (go build ./hack/startuptime/main.go),
// so that go install ./..., which pre-commit runs to install its hooks,
// installs knc's own binaries alone.

//go:build ignore

package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"
)

func main() {
	runs := flag.Int("n", 21, "run the command `N` times")
	label := flag.String("label", "", "name the command `LABEL` in the output (default: the command)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: startuptime [-n N] [-label LABEL] COMMAND [ARG...]")
		os.Exit(2)
	}
	if *label == "" {
		*label = flag.Arg(0)
	}
	var walls []time.Duration
	var rss []int64
	for range *runs {
		cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		wall := time.Since(start)
		if err != nil {
			fmt.Fprintf(os.Stderr, "startuptime: %s: %v\n%s", *label, err, out)
			os.Exit(1)
		}
		walls = append(walls, wall)
		rss = append(rss, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) // KiB on Linux
	}
	slices.Sort(walls)
	slices.Sort(rss)
	fmt.Printf("%-36s wall %6.1f ms (fastest %6.1f)   peak RSS %4d MB   (median of %d)\n",
		*label, float64(walls[len(walls)/2].Microseconds())/1000, float64(walls[0].Microseconds())/1000, rss[len(rss)/2]/1024, len(walls))
}
