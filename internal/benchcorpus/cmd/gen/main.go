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
}
