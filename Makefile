# knc's build, test and benchmark entry points. `make test` and `make run`
# install what they need; nothing is installed by hand.

GO ?= go
BIN := $(CURDIR)/bin
KNC := $(BIN)/knc

# The kube-apiserver and etcd the tests run against are built from source.
-include hack/testbin.mk

.PHONY: all build image image-test release-check test test-short bench bench-runtime run fuzz fuzz-knative fuzz-knative-admission fuzz-knative-sources fuzz-knative-filter reliability soak golden golden-check vet lint fmt-check tidy-check clean

all: build

# Builds are stamped from git: knc version reports them, and knc build
# writes the image of a release (see internal/version). A commit without a
# tag is not a release (git describe's v1.2.3-4-gSHA is told apart).
VERSION ?= $(shell git describe --tags --match 'v*' --dirty 2>/dev/null || echo "devel-$$(git rev-parse --short HEAD 2>/dev/null)")
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
VERSION_PKG := github.com/knc-dev/knc/internal/version
LDFLAGS := -s -w -buildid= -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).commit=$(COMMIT)

# knc-draw, which lays out knc graph's and knc run's drawings, goes beside
# knc, where knc looks for it first.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(KNC) ./cmd/knc
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/knc-draw ./cmd/knc-draw

# image writes knc's runtime image for IMAGE_PLATFORMS as an OCI image
# layout in IMAGE_DIR, without a container daemon (hack/image, on
# go-containerregistry): a static knc-runtime (cmd/knc-runtime, the
# runtime without the compiler) on a minimal root it assembles itself. The same commit gives the same digest, printed last.
# The layer is zstd; IMAGE_COMPRESSION=gzip writes it for a container
# runtime that cannot pull zstd (containerd before 1.5, Docker before 23).
IMAGE_DIR ?= $(BIN)/image
IMAGE_PLATFORMS ?= linux/amd64 linux/arm64
IMAGE_COMPRESSION ?= zstd
image:
	@mkdir -p $(BIN)/platforms
	@set -e; for p in $(IMAGE_PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/platforms/knc-runtime-$$os-$$arch ./cmd/knc-runtime; \
	done
	cd hack/image && $(GO) run . -out $(IMAGE_DIR) -epoch $(SOURCE_DATE_EPOCH) -version '$(VERSION)' -revision '$(COMMIT)' -compression $(IMAGE_COMPRESSION) \
		$(foreach p,$(IMAGE_PLATFORMS),-bin $(p)=$(BIN)/platforms/knc-runtime-$(subst /,-,$(p)))

# image-test builds the image twice, checks that both have the same
# digest, then unpacks it and runs knc from its root file system (as root,
# in a chroot) and checks its config (hack/image tests).
image-test:
	$(MAKE) image IMAGE_DIR=$(BIN)/image
	$(MAKE) image IMAGE_DIR=$(BIN)/image-again
	@a=$$(cat $(BIN)/image/index.json | sha256sum); b=$$(cat $(BIN)/image-again/index.json | sha256sum); \
		if [ "$$a" != "$$b" ]; then echo "image-test: two builds of one commit differ"; diff $(BIN)/image/index.json $(BIN)/image-again/index.json; exit 1; fi; \
		echo "image-test: two builds give the same image index"
	cd hack/image && KNC_IMAGE_LAYOUT=$(BIN)/image KNC_IMAGE_PLATFORMS='$(IMAGE_PLATFORMS)' KNC_IMAGE_VERSION='$(VERSION)' KNC_IMAGE_REVISION='$(COMMIT)' KNC_IMAGE_COMPRESSION=$(IMAGE_COMPRESSION) $(GO) test -count=1 .

vet:
	$(GO) vet ./...

# lint runs staticcheck and actionlint (on .github/workflows), pinned,
# fetched through the Go module proxy.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
ACTIONLINT ?= github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
lint:
	$(GO) run $(STATICCHECK) ./...
	$(GO) run $(ACTIONLINT)

# release-check checks the release configuration with goreleaser's own
# check, pinned as the release workflow runs it. It is not part of lint:
# building goreleaser takes minutes.
GORELEASER ?= github.com/goreleaser/goreleaser/v2@v2.15.1
release-check:
	$(GO) run $(GORELEASER) check

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# tidy-check fails when go.mod or go.sum is not what go mod tidy makes it.
tidy-check:
	$(GO) mod tidy -diff

# test runs every test, the ones against a real kube-apiserver included; it
# builds that API server from source first when the pinned build is missing.
# The packages whose code runs on many goroutines (RACE_PKGS) run under the
# race detector; the others run without it, which keeps the whole under CI's
# time.
RACE_PKGS := ./runtime/... ./test/e2e/...
test: fmt-check tidy-check vet lint testbin
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) $(GO) test -count=1 -timeout 30m $$($(GO) list ./... | grep -v -e '/runtime/' -e '/runtime$$' -e '/test/e2e')
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) $(GO) test -race -count=1 -timeout 30m $(RACE_PKGS)

# test-short skips the tests that need the API server or long-running load.
test-short:
	$(GO) test -short ./...

# golden rewrites the golden files and the testscript expectations: every
# test that reads KNC_UPDATE.
GOLDEN_PKGS := ./golden/... ./cmd/knc/cli/... ./compiler/graph/... ./compiler/diff/...
golden:
	KNC_UPDATE=1 $(GO) test -count=1 $(GOLDEN_PKGS)

# golden-check regenerates the golden files and fails when that changes or
# adds a file: a golden file out of date with the code, or edited by hand.
golden-check: golden
	@out=$$(git status --porcelain --untracked-files=all -- golden cmd/knc/cli compiler); \
		if [ -n "$$out" ]; then echo "make golden changed these files; review and commit them:"; echo "$$out"; git --no-pager diff --stat; exit 1; fi

# bench runs the Go benchmarks, the runtime benchmarks (bench-runtime),
# then the command-level comparisons that need whole processes (knc
# validate next to cue vet, and with policies next to without).
bench:
	$(GO) test -run '^$$' -bench . -skip '^BenchmarkRuntime$$' -benchmem ./...
	$(MAKE) bench-runtime
	bash hack/bench-validate.sh
	bash hack/bench-policies.sh

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
# Every func Fuzz of the tree is listed; `grep -rn '^func Fuzz' --include=*_test.go .`
# finds them.
FUZZ_TARGETS := ./cmd/knc/cli:FuzzValidateAndBuild ./runtime/ingress:FuzzFramingScan ./runtime/ingress:FuzzLeanServesAsNetHTTP ./runtime/cehttp:FuzzReadRequest ./runtime/cehttp:FuzzNextRecord ./runtime/cehttp:FuzzRecordEvent ./runtime/cehttp:FuzzEventRecordMatchesToNATS ./runtime/cehttp:FuzzNATSRoundTrip ./internal/cesql:FuzzParse ./compiler:FuzzLoad ./compiler/load:FuzzCompactReaderAgreesWithYAMLv3 ./compiler/render:FuzzBuild ./compiler/render:FuzzEncodedStringsSurviveEveryReader ./internal/routing:FuzzDecode ./runtime/router:FuzzMatch ./runtime/delivery:FuzzDirectReadsWhatTheTransportReads ./compiler/kustomize:FuzzIsLocalRelativePath ./compiler/kustomize:FuzzFastRenderer
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$name in $$pkg for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

# fuzz-knative runs both long campaigns against Knative's own code: the
# admission of manifests, then the Broker filter on Trigger/event pairs.
fuzz-knative: fuzz-knative-admission fuzz-knative-sources fuzz-knative-filter

# fuzz-knative-admission judges N generated manifests with knc and with Knative
# Eventing's own admission (tools/koracle of ../shared, or of
# KNC_SHARED_DIR), on a new seed unless SEED is given. It prints the counts
# by kind and mutation operator, the share Knative refuses and each allowed
# difference with its count, and writes a shrunk reproducer of every
# disagreement to bin/fuzz-knative. A bounded run (300 inputs, seed 1) is
# part of `make test`.
N ?= 10000
SEED ?= $(shell date +%s)
fuzz-knative-admission:
	$(GO) test -count=1 -v -timeout 60m ./test/admission -run '^TestKnativeAdmissionDifferential$$' -args -admission.n=$(N) -admission.seed=$(SEED) -admission.out=$(BIN)/fuzz-knative

# fuzz-knative-sources does the same for the sources and flows
# (PingSource, ApiServerSource, ContainerSource, SinkBinding, Sequence,
# Parallel): N inputs from SEED, reproducers in bin/fuzz-knative-sources.
# A bounded run (300 inputs, seed 1) is part of `make test`.
fuzz-knative-sources:
	$(GO) test -count=1 -v -timeout 60m ./test/admission -run '^TestSourcesAdmissionDifferential$$' -args -admission.sources.n=$(N) -admission.seed=$(SEED) -admission.out=$(BIN)/fuzz-knative-sources

# fuzz-knative-filter compares runtime/router with Knative's own Broker
# filter (kfilter, from the shared koracle tools: KNC_SHARED_DIR or ../shared)
# on KNATIVE_FILTER_PAIRS generated Trigger/event pairs from seed
# KNATIVE_FILTER_SEED, prints the disagreements by class with a minimal
# reproducer of each, and writes every one under $(BIN)/knative-filter.
KNATIVE_FILTER_PAIRS ?= 100000
KNATIVE_FILTER_SEED ?= 1000000
fuzz-knative-filter:
	@rm -rf $(BIN)/knative-filter
	KNC_KNATIVE_FILTER_PAIRS=$(KNATIVE_FILTER_PAIRS) KNC_KNATIVE_FILTER_SEED=$(KNATIVE_FILTER_SEED) \
		KNC_KNATIVE_FILTER_OUT=$(BIN)/knative-filter \
		$(GO) test -count=1 -v -timeout 60m -run '^TestKnativeFilter$$' ./runtime/router/

# reliability runs the fault and scale-out tests (also part of `make test`)
# and prints the figures each one logs: events sent, accepted, delivered,
# dead-lettered, duplicates and lost. See docs/reliability.md.
reliability:
	@mkdir -p $(BIN)
	@$(GO) test -count=1 -v -timeout 15m ./test/faults/ ./test/cluster3/ > $(BIN)/reliability.log 2>&1; \
		status=$$?; grep -E 'FIGURES|^--- |^(ok|FAIL)' $(BIN)/reliability.log; \
		[ $$status -eq 0 ] || echo "full log: $(BIN)/reliability.log"; exit $$status

# soak runs the runtime at half its maximum load for SOAK (10m) and reports
# its RSS and goroutines, which must stay flat; then fills and frees its data
# volume KNC_DISKFULL_ROUNDS (20) times, and it must take and deliver events
# again within 2 s of each freeing. Not part of `make test`.
SOAK ?= 10m
soak:
	KNC_SOAK_DURATION=$(SOAK) $(GO) test ./test/soak/ -run '^$$' -bench Soak -benchtime 1x -timeout 60m -v

clean:
	rm -rf $(BIN)
