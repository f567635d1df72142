#!/usr/bin/env bash
# Measures what starting knc costs each command. go-graphviz compiles its
# WebAssembly module to machine code in every process that links it, so
# only knc-draw links it, and knc runs knc-draw (beside it in bin/) only
# to lay out a drawing. Each command runs cold (a TMPDIR that does not
# exist, as in a container without a writable /tmp: nothing is read or
# kept) and warm (a cache filled by a run before), and the median wall
# time, CPU time and peak RSS of each is printed.
#
# usage: hack/bench-startup.sh [RUNS]   (default 5)
#
# It also measures knc-runtime --version, with an empty TMPDIR that it
# checks stays empty, and a hello-world Go program, the floor.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
bin=$PWD/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$bin/knc" ./cmd/knc
go build -o "$bin/knc-runtime" ./cmd/knc-runtime
go build -o "$bin/knc-draw" ./cmd/knc-draw
# The floor: a Go program that prints a line.
mkdir -p "$work/hello"
printf 'module hello\n\ngo 1.26\n' >"$work/hello/go.mod"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello, world") }\n' >"$work/hello/main.go"
(cd "$work/hello" && go build -o "$bin/hello" .)

# shellcheck source=measure.sh
. hack/measure.sh

# 1,250 objects of the bench corpus hold 1,000 Triggers.
corpus=$work/corpus
mkdir -p "$corpus" "$work/cache"
go run ./internal/benchcorpus/cmd/gen/main.go "$corpus" 1250
TMPDIR=$work/cache "$bin/knc" version >/dev/null

echo "machine: $(nproc) cores, $(awk '/model name/ {sub(/.*: /, ""); print; exit}' /proc/cpuinfo); load: $(cut -d' ' -f1-3 /proc/loadavg)"
measure "hello, world" env TMPDIR="$work/none" "$bin/hello"
# The runtime's binary writes nothing to TMPDIR: run it with an empty one.
mkdir -p "$work/empty"
measure "cold: knc-runtime --version" env TMPDIR="$work/empty" "$bin/knc-runtime" --version
if [ -n "$(ls -A "$work/empty")" ]; then echo "knc-runtime wrote to TMPDIR: $(ls -A "$work/empty")"; fi
for cmd in "version" "validate examples/quickstart" "graph -o svg $corpus"; do
	label=${cmd/$corpus/1,000 Triggers}
	# shellcheck disable=SC2086 # cmd is split into arguments on purpose
	measure "cold: $label" env TMPDIR="$work/none" "$bin/knc" $cmd
	# shellcheck disable=SC2086
	measure "warm: $label" env TMPDIR="$work/cache" "$bin/knc" $cmd
done
