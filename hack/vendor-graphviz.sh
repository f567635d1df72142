#!/usr/bin/env bash
# Downloads the WebAssembly Graphviz that the live page /ui lays out its
# drawing with, when the runtime serving it has no knc-draw (the runtime's
# image), into runtime/ui/static/graphviz, and checks it against the
# sha256 sums below: the file is a third-party library, pinned as a Go
# module is, and embedded in the binary with the page.
#
# usage: hack/vendor-graphviz.sh          download and write the files
#        hack/vendor-graphviz.sh -check   download and compare with the committed files
#
# To move to another version, change the version and the sums below, run
# the script, and update runtime/ui/static/graphviz/README.md.
set -euo pipefail

package=@hpcc-js/wasm-graphviz
version=1.6.1
tarball_url=https://registry.npmjs.org/@hpcc-js/wasm-graphviz/-/wasm-graphviz-$version.tgz
tarball_sha256=4c50dd6f1fc769846664e5783568a9bc7e02d8d54d12f559cb732e9f36935b6f
script_sha256=c5b1574b6e6474ebca8f8e9e5e48af51d6165043368c64c78e87da0eb072c349
license_sha256=1eb85fc97224598dad1852b5d6483bbcf0aa8608790dcc657a5a2a761ae9c8c6

root=$(cd "$(dirname "$0")/.." && pwd)
dest=$root/runtime/ui/static/graphviz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

curl --fail --silent --show-error --location --proto '=https' -o "$work/package.tgz" "$tarball_url"
echo "$tarball_sha256  $work/package.tgz" | sha256sum --check --quiet
tar -xzf "$work/package.tgz" -C "$work" package/dist/index.js package/LICENSE
echo "$script_sha256  $work/package/dist/index.js" | sha256sum --check --quiet
echo "$license_sha256  $work/package/LICENSE" | sha256sum --check --quiet

if [[ ${1:-} == -check ]]; then
	cmp "$work/package/dist/index.js" "$dest/graphviz.js"
	cmp "$work/package/LICENSE" "$dest/LICENSE"
	echo "$dest holds $package $version"
	exit 0
fi
mkdir -p "$dest"
cp "$work/package/dist/index.js" "$dest/graphviz.js"
cp "$work/package/LICENSE" "$dest/LICENSE"
echo "wrote $package $version to $dest"
