#!/usr/bin/env bash
# Validates a generated corpus of 10,000 objects with knc, without
# policies and with the five of internal/benchcorpus, and prints the
# median wall time, CPU time and peak RSS of each.
#
# usage: hack/bench-policies.sh [RUNS]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
bin=$PWD/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$bin/knc" ./cmd/knc

# shellcheck source=measure.sh
. hack/measure.sh

echo "machine: $(nproc) cores, $(awk '/model name/ {sub(/.*: /, ""); print; exit}' /proc/cpuinfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$work/corpus" "$work/policies"
go run ./internal/benchcorpus/cmd/gen/main.go "$work/corpus" 10000 "$work/policies"
echo "corpus: 10000 objects"
measure "  knc validate" "$bin/knc" validate "$work/corpus"
measure "  knc validate, 5 policies" "$bin/knc" validate "$work/corpus" --policies "$work/policies"
