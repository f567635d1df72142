#!/usr/bin/env bash
# Builds the kube-apiserver and etcd binaries that internal/kubetest runs,
# into hack/testbin/bin/ (the directory KUBEBUILDER_ASSETS points at).
#
# They are built from source because the usual envtest download servers are
# not reachable everywhere this project is built; the Go module proxy is.
# A cold build takes minutes, so the result is stamped with a hash of the
# inputs that pin it and the build is skipped while that hash is unchanged.
#
# No -trimpath: the main module's tests compile many of the same k8s.io
# packages, and identical flags let both builds share the Go build cache.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${here}/bin"
stamp="${bin}/.stamp"

cd "${here}"
export GOWORK=off

mkdir -p "${bin}"

# Two concurrent builds (say, two make targets) would race on bin/; the
# second waits and then finds the stamp current.
if command -v flock >/dev/null 2>&1; then
	exec 9>"${bin}/.lock"
	flock 9
fi

want="$(cat go.mod go.sum build.sh | sha256sum | cut -d' ' -f1)"
if [[ -f "${stamp}" && "$(cat "${stamp}")" == "${want}" &&
	-x "${bin}/kube-apiserver" && -x "${bin}/etcd" ]]; then
	exit 0
fi

k8s_version="$(go list -m -f '{{.Version}}' k8s.io/kubernetes)"
if [[ ! "${k8s_version}" =~ ^v([0-9]+)\.([0-9]+)\. ]]; then
	echo "build.sh: cannot parse k8s.io/kubernetes version ${k8s_version@Q}" >&2
	exit 1
fi
major="${BASH_REMATCH[1]}"
minor="${BASH_REMATCH[2]}"

# The API server reports this version through /version and discovery;
# without it clients see v0.0.0-master and version-gated code misbehaves.
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X ${pkg}.gitVersion=${k8s_version}"
	ldflags+=" -X ${pkg}.gitMajor=${major}"
	ldflags+=" -X ${pkg}.gitMinor=${minor}"
	ldflags+=" -X ${pkg}.gitTreeState=clean"
done

rm -f "${stamp}"
echo "build.sh: building kube-apiserver ${k8s_version} and etcd into ${bin} (a cold build takes several minutes)" >&2
go build -buildvcs=false -ldflags "${ldflags}" -o "${bin}/" \
	k8s.io/kubernetes/cmd/kube-apiserver \
	go.etcd.io/etcd/server/v3

# etcd's main package is the module root, so go build names it "server".
mv -f "${bin}/server" "${bin}/etcd"

"${bin}/kube-apiserver" --version >&2
"${bin}/etcd" --version >&2

echo "${want}" >"${stamp}"
