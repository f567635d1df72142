# knc's build, test and benchmark entry points. `make test` and `make run`
# install what they need; nothing is installed by hand.

GO ?= go
BIN := $(CURDIR)/bin
KNC := $(BIN)/knc

# The kube-apiserver and etcd the tests run against are built from source.
-include hack/testbin.mk

.PHONY: all build test test-short bench run fuzz golden vet fmt-check clean

all: build

build:
	$(GO) build -o $(KNC) ./cmd/knc

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# test runs every test, the ones against a real kube-apiserver included; it
# builds that API server from source first when the pinned build is missing.
test: fmt-check vet testbin
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) $(GO) test -count=1 -timeout 30m ./...

# test-short skips the tests that need the API server or long-running load.
test-short:
	$(GO) test -short ./...

# golden rewrites the golden files and the testscript expectations.
golden:
	KNC_UPDATE=1 $(GO) test ./golden/... ./internal/cli/...

# bench runs the Go benchmarks, then the command-level comparisons that need
# whole processes (knc validate next to cue vet).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	bash hack/bench-validate.sh

# run serves the quickstart example locally, with `knc display` printing the
# events its subscribers receive; stop it with Ctrl-C.
run: build
	KNC=$(KNC) bash hack/run-quickstart.sh

clean:
	rm -rf $(BIN)
