#!/usr/bin/env bash
# Validates generated corpora of 10,000 and 100,000 objects with knc and,
# side by side in the same run, with `cue vet` against the same embedded
# schema, and prints the median wall time, CPU time and peak RSS of each.
#
# usage: hack/bench-validate.sh [RUNS]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
bin=$PWD/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$bin/knc" ./cmd/knc
[ -x "$bin/cue" ] || GOBIN="$bin" go install cuelang.org/go/cmd/cue@v0.17.1

# shellcheck source=measure.sh
. hack/measure.sh

# cue vet checks each kind's stream against its definition, one call per
# kind, the way a user would script it; a wrapper runs them in sequence so
# /usr/bin/time sees one command.
cat >"$work/cue-vet.sh" <<SCRIPT
#!/usr/bin/env bash
set -e
for kind in Broker Trigger Channel Subscription; do
	file=\$(echo "\$kind" | tr 'A-Z' 'a-z')s.yaml
	"$bin/cue" vet -c -d "#\$kind" $PWD/schema/*.cue "\$1/\$file"
done
SCRIPT
chmod +x "$work/cue-vet.sh"

echo "machine: $(nproc) cores, $(awk '/model name/ {sub(/.*: /, ""); print; exit}' /proc/cpuinfo)"
for n in 10000 100000; do
	dir=$work/corpus-$n
	mkdir -p "$dir"
	go run ./internal/benchcorpus/cmd/gen/main.go "$dir" "$n"
	echo "corpus: $n objects"
	measure "  knc validate" "$bin/knc" validate "$dir"
	measure "  cue vet (same schema)" "$work/cue-vet.sh" "$dir"
done
