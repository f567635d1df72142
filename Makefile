# knc's build, test and benchmark entry points. `make test` and `make run`
# install what they need; nothing is installed by hand.

GO ?= go
BIN := $(CURDIR)/bin
KNC := $(BIN)/knc

# The kube-apiserver and etcd the tests run against are built from source.
-include hack/testbin.mk

.PHONY: all build test test-short bench bench-runtime run fuzz reliability soak golden vet lint fmt-check clean

all: build

build:
	$(GO) build -o $(KNC) ./cmd/knc

vet:
	$(GO) vet ./...

# lint runs staticcheck, pinned, fetched through the Go module proxy.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(GO) run $(STATICCHECK) ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# test runs every test, the ones against a real kube-apiserver included; it
# builds that API server from source first when the pinned build is missing.
test: fmt-check vet lint testbin
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) $(GO) test -count=1 -timeout 30m ./...

# test-short skips the tests that need the API server or long-running load.
test-short:
	$(GO) test -short ./...

# golden rewrites the golden files and the testscript expectations.
golden:
	KNC_UPDATE=1 $(GO) test ./golden/... ./internal/cli/...

# bench runs the Go benchmarks, the runtime benchmarks (bench-runtime),
# then the command-level comparisons that need whole processes (knc
# validate next to cue vet).
bench:
	$(GO) test -run '^$$' -bench . -skip '^BenchmarkRuntime$$' -benchmem ./...
	$(MAKE) bench-runtime
	bash hack/bench-validate.sh

# bench-runtime starts, on loopback in one process, the runtime, a load
# generator, subscribers and the ceilings each scenario is compared with
# (a plain net/http handler answering 202, a direct HTTP client), and
# prints CPU µs per event, events/s, p50/p99 latency and the ratios; see
# docs/performance.md. SCENARIO picks one (ingress, trigger1, triggers1000,
# fanout10, channel10, delivery, latency1, latency64, fsync); RUNTIME_ARGS
# passes -runtime.rounds, -runtime.window, -runtime.conns, -runtime.only.
SCENARIO ?=
RUNTIME_ARGS ?=
bench-runtime:
	$(GO) test ./runtime/engine/ -run '^$$' -bench 'Runtime/$(SCENARIO)' -benchtime 1x -timeout 30m -args $(RUNTIME_ARGS)

# run serves the quickstart example locally, with `knc display` printing the
# events its subscribers receive; stop it with Ctrl-C.
run: build
	KNC=$(KNC) bash hack/run-quickstart.sh

# fuzz runs each fuzz target for FUZZTIME. Their seed corpora (testdata/fuzz)
# run as plain tests in `make test`; a failing input found here is written
# to the package's testdata/fuzz and becomes a seed.
FUZZTIME ?= 30s
FUZZ_TARGETS := ./runtime/cehttp:FuzzReadRequest ./runtime/cehttp:FuzzNextRecord ./runtime/cehttp:FuzzRecordEvent ./runtime/cehttp:FuzzEventRecordMatchesToNATS ./compiler:FuzzLoad ./compiler/render:FuzzBuild ./compiler/render:FuzzEncodedStringsSurviveEveryReader ./runtime/routing:FuzzDecode ./runtime/router:FuzzMatch
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$name in $$pkg for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

# reliability runs the fault and scale-out tests (also part of `make test`)
# and prints the figures each one logs: events sent, accepted, delivered,
# dead-lettered, duplicates and lost. See docs/reliability.md.
reliability:
	@mkdir -p $(BIN)
	@$(GO) test -count=1 -v -timeout 15m ./test/faults/ ./test/cluster3/ > $(BIN)/reliability.log 2>&1; \
		status=$$?; grep -E 'FIGURES|^--- |^(ok|FAIL)' $(BIN)/reliability.log; \
		[ $$status -eq 0 ] || echo "full log: $(BIN)/reliability.log"; exit $$status

# soak runs the runtime at half its maximum load for SOAK (10m) and reports
# its RSS and goroutines, which must stay flat. Not part of `make test`.
SOAK ?= 10m
soak:
	KNC_SOAK_DURATION=$(SOAK) $(GO) test ./test/soak/ -run '^$$' -bench Soak -benchtime 1x -timeout 60m -v

clean:
	rm -rf $(BIN)
