#!/usr/bin/env bash
# Build Volcano's own scheduler (volcano.sh/volcano/cmd/scheduler -> vc-scheduler) and controller
# manager (volcano.sh/volcano/cmd/controller-manager -> vc-controller-manager) from the wrapper
# module in tools/volcano/. Nothing in volcano-bridge runs them: they are what our chart's
# `volcano.external=true` mode is installed beside (tests/integration/test_helm_beside_volcano.py,
# built by `tools/dev test`), and the Volcano contender of bench/scheduler_compare.py. Same
# pattern as tools/build-binaries.sh: both binaries, Volcano's CRDs (config/crd/volcano/bases/ and
# config/crd/jobflow/bases/ from the module zip, as Volcano's chart installs them) and the default
# scheduler conf of Volcano's chart (installer/helm/chart/volcano/config/volcano-scheduler.conf)
# land in .cache/bin/volcano-<version>-<go.mod+go.sum hash>/; a warm run builds nothing.
# Prints volcano=DIR on stdout; progress goes to stderr.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=readonly
cache="${VBRIDGE_BIN_CACHE:-$top/.cache/bin}"
mkdir -p "$cache"

dir="$top/tools/volcano"
v=$(awk '$1=="volcano.sh/volcano" {print $2; exit} $1=="require" && $2=="volcano.sh/volcano" {print $3; exit}' "$dir/go.mod")
out="$cache/volcano-$v-$(cat "$dir/go.mod" "$dir/go.sum" | sha256sum | cut -c1-10)"  # content only: the checkout path must not matter
if [ -x "$out/vc-scheduler" ] && [ -x "$out/vc-controller-manager" ] && [ -d "$out/crds" ] && [ -f "$out/volcano-scheduler.conf" ]; then
  echo "volcano: cached in $out" >&2; echo "volcano=$out"; exit 0
fi
if [ "${VBRIDGE_NO_BUILD:-}" = 1 ]; then echo "volcano: not built yet in $out (VBRIDGE_NO_BUILD=1)" >&2; exit 3; fi
echo "volcano: building vc-scheduler and vc-controller-manager $v (first build takes minutes)" >&2
t0=$SECONDS tmp="$out.tmp.$$"
rm -rf "$tmp"; mkdir -p "$tmp/crds" "$tmp/bin"
trap 'rm -rf "$tmp"' EXIT
# The release Makefile stamps pkg/version the same way, so `vc-scheduler --version` says $v.
# One `go build` of both packages into a directory: shared dependencies compile once.
ld="-s -w -X volcano.sh/volcano/pkg/version.Version=$v -X volcano.sh/volcano/pkg/version.GitSHA=release-$v"
ld="$ld -X volcano.sh/volcano/pkg/version.Built=$(date -u -d @0 +%Y-%m-%dT%H:%M:%SZ)"
(
  cd "$dir"
  go mod download >&2
  go build -trimpath -ldflags "$ld" -o "$tmp/bin/" volcano.sh/volcano/cmd/scheduler volcano.sh/volcano/cmd/controller-manager >&2
  mv "$tmp/bin/scheduler" "$tmp/vc-scheduler"; mv "$tmp/bin/controller-manager" "$tmp/vc-controller-manager"; rmdir "$tmp/bin"
  src="$(go list -m -f '{{.Dir}}' volcano.sh/volcano)"
  cp "$src"/config/crd/volcano/bases/*.yaml "$src"/config/crd/jobflow/bases/*.yaml "$tmp/crds/"
  cp "$src/installer/helm/chart/volcano/config/volcano-scheduler.conf" "$tmp/"
)
chmod -R u+w "$tmp"
rm -rf "$out"; mv "$tmp" "$out"; trap - EXIT
echo "volcano: built in $((SECONDS - t0)) s -> $out" >&2
echo "volcano=$out"
