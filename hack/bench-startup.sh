#!/usr/bin/env bash
# Measures what starting knc costs each command. go-graphviz compiles its
# WebAssembly module to machine code in every process that links it, so
# only knc-draw links it, and knc runs knc-draw (beside it in bin/) only
# to lay out a drawing. Its compiled module is kept in knc's user cache
# directory (internal/graphvizcache: $XDG_CACHE_HOME/knc), not in TMPDIR,
# so knc graph runs cold (XDG_CACHE_HOME a file, under which no cache can
# be made: nothing is read or kept) and warm (a cache filled by a drawing
# before); the commands that draw nothing run with an empty TMPDIR, which
# is checked to stay empty. The median wall time and peak RSS of each is
# printed.
#
# usage: hack/bench-startup.sh [RUNS]   (default 5)
#
# It also measures knc-runtime --version, with an empty TMPDIR that it
# checks stays empty; a hello-world Go program, the floor of any Go binary;
# and hack/cuefloor, which links CUE's evaluator and nothing else, the
# floor of a binary that validates with CUE. The commands that only start
# (hello, cuefloor, version, validate) are timed in milliseconds by
# hack/startuptime; /usr/bin/time counts hundredths of a second.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
bin=$PWD/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Built as make build and the release build them: static and stripped.
release=(env CGO_ENABLED=0 go build -trimpath -ldflags '-s -w')
"${release[@]}" -o "$bin/knc" ./cmd/knc
"${release[@]}" -o "$bin/knc-runtime" ./cmd/knc-runtime
"${release[@]}" -o "$bin/knc-draw" ./cmd/knc-draw
"${release[@]}" -o "$work/cuefloor" ./hack/cuefloor/main.go
go build -o "$work/startuptime" ./hack/startuptime/main.go
# The floor: a Go program that prints a line.
mkdir -p "$work/hello"
printf 'module hello\n\ngo 1.26\n' >"$work/hello/go.mod"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello, world") }\n' >"$work/hello/main.go"
(cd "$work/hello" && "${release[@]}" -o "$bin/hello" .)

# shellcheck source=measure.sh
. hack/measure.sh

# 1,250 objects of the bench corpus hold 1,000 Triggers.
corpus=$work/corpus
mkdir -p "$corpus" "$work/cache"
go run ./internal/benchcorpus/cmd/gen/main.go "$corpus" 1250
: >"$work/nocache"
# Fills Graphviz's cache: only a drawing does, in knc-draw.
XDG_CACHE_HOME=$work/cache "$bin/knc" graph -o svg examples/quickstart >/dev/null
if [ -z "$(ls -A "$work/cache")" ]; then echo "knc graph left no cache in $work/cache" >&2; exit 1; fi

echo "machine: $(nproc) cores, $(awk '/model name/ {sub(/.*: /, ""); print; exit}' /proc/cpuinfo); load: $(cut -d' ' -f1-3 /proc/loadavg)"
quick() { local label=$1; shift; "$work/startuptime" -n "$runs" -label "$label" "$@"; }
quick "hello, world" env TMPDIR="$work/none" "$bin/hello"
quick "CUE linked, nothing run (cuefloor)" env TMPDIR="$work/none" "$work/cuefloor"
# The runtime's binary writes nothing to TMPDIR: run it with an empty one.
mkdir -p "$work/empty"
quick "cold: knc-runtime --version" env TMPDIR="$work/empty" "$bin/knc-runtime" --version
if [ -n "$(ls -A "$work/empty")" ]; then echo "knc-runtime wrote to TMPDIR: $(ls -A "$work/empty")"; fi
for cmd in "version" "validate examples/quickstart"; do
	# shellcheck disable=SC2086 # cmd is split into arguments on purpose
	quick "$cmd" env TMPDIR="$work/empty" "$bin/knc" $cmd
done
if [ -n "$(ls -A "$work/empty")" ]; then echo "knc wrote to TMPDIR: $(ls -A "$work/empty")"; fi
measure "cold: graph -o svg 1,000 Triggers" env XDG_CACHE_HOME="$work/nocache" "$bin/knc" graph -o svg "$corpus"
measure "warm: graph -o svg 1,000 Triggers" env XDG_CACHE_HOME="$work/cache" "$bin/knc" graph -o svg "$corpus"
