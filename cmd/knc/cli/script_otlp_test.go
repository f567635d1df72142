package cli

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/knc-dev/knc/runtime/tracing/otlptest"
)

// receivers are the OTLP receivers scripts started, by URL.
var receivers sync.Map

// cmdOTLPReceiver starts an OTLP receiver for the script and sets VAR to
// its URL: otlpreceiver [grpc] VAR (OTLP/HTTP without grpc).
func cmdOTLPReceiver(ts *testscript.TestScript, neg bool, args []string) {
	start := otlptest.NewHTTP
	if len(args) == 2 && args[0] == "grpc" {
		start, args = otlptest.NewGRPC, args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: otlpreceiver [grpc] VAR")
	}
	r, err := start()
	ts.Check(err)
	receivers.Store(r.URL, r)
	ts.Defer(func() {
		receivers.Delete(r.URL)
		r.Close()
	})
	ts.Setenv(args[0], r.URL)
}

// spanKinds names OTLP's span kinds.
var spanKinds = map[int32]string{1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}

// cmdOTLPSpans waits for at least N spans at the receiver at URL, for at
// most 30 seconds, then prints one line per span, sorted: its name, kind,
// trace, and parent (the parent span's name, or the ID of a parent it did
// not receive, or "none"), and whether its status is an error:
// otlpspans URL N.
func cmdOTLPSpans(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: otlpspans URL N")
	}
	v, ok := receivers.Load(args[0])
	if !ok {
		ts.Fatalf("no OTLP receiver at %s", args[0])
	}
	r := v.(*otlptest.Receiver)
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	deadline := time.Now().Add(30 * time.Second)
	for r.Len() < n {
		if time.Now().After(deadline) {
			ts.Fatalf("%d spans received, want %d", r.Len(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	spans := r.Spans()
	names := map[string]string{}
	for _, s := range spans {
		names[s.SpanID] = s.Name
	}
	var lines []string
	for _, s := range spans {
		parent := "none"
		switch {
		case names[s.ParentSpanID] != "":
			parent = names[s.ParentSpanID]
		case s.ParentSpanID != "":
			parent = "remote " + s.ParentSpanID
		}
		line := fmt.Sprintf("%s (%s) trace %s parent %s", s.Name, spanKinds[s.Kind], s.TraceID, parent)
		if s.Error {
			line += " error"
		}
		lines = append(lines, line)
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Fprintln(ts.Stdout(), l)
	}
}
