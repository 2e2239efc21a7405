#!/usr/bin/env bash
# Build Volcano's own scheduler (volcano.sh/volcano/cmd/scheduler) from the wrapper module in
# tools/volcano/, for bench/scheduler_compare.py only: nothing in volcano-bridge runs it. Opt-in,
# so `tools/dev` never pays for it. Same pattern as tools/build-binaries.sh: the binary and the
# CRDs it needs (config/crd/volcano/bases/ from the module zip) land in
# .cache/bin/volcano-<version>-<go.sum hash>/; a warm run builds nothing.
# Prints volcano=DIR on stdout; progress goes to stderr.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=readonly
cache="${VBRIDGE_BIN_CACHE:-$top/.cache/bin}"
mkdir -p "$cache"

dir="$top/tools/volcano"
v=$(awk '$1=="volcano.sh/volcano" {print $2; exit} $1=="require" && $2=="volcano.sh/volcano" {print $3; exit}' "$dir/go.mod")
out="$cache/volcano-$v-$(sha256sum "$dir/go.mod" "$dir/go.sum" | sha256sum | cut -c1-10)"
if [ -x "$out/vc-scheduler" ] && [ -d "$out/crds" ]; then
  echo "volcano: cached in $out" >&2; echo "volcano=$out"; exit 0
fi
if [ "${VBRIDGE_NO_BUILD:-}" = 1 ]; then echo "volcano: not built yet in $out (VBRIDGE_NO_BUILD=1)" >&2; exit 3; fi
echo "volcano: building vc-scheduler $v (first build takes minutes)" >&2
t0=$SECONDS tmp="$out.tmp.$$"
rm -rf "$tmp"; mkdir -p "$tmp/crds"
trap 'rm -rf "$tmp"' EXIT
# The release Makefile stamps pkg/version the same way, so `vc-scheduler --version` says $v.
ld="-s -w -X volcano.sh/volcano/pkg/version.Version=$v -X volcano.sh/volcano/pkg/version.GitSHA=release-$v"
ld="$ld -X volcano.sh/volcano/pkg/version.Built=$(date -u -d @0 +%Y-%m-%dT%H:%M:%SZ)"
(
  cd "$dir"
  go mod download >&2
  go build -trimpath -ldflags "$ld" -o "$tmp/vc-scheduler" volcano.sh/volcano/cmd/scheduler >&2
  cp "$(go list -m -f '{{.Dir}}' volcano.sh/volcano)"/config/crd/volcano/bases/*.yaml "$tmp/crds/"
)
chmod -R u+w "$tmp"
rm -rf "$out"; mv "$tmp" "$out"; trap - EXIT
echo "volcano: built in $((SECONDS - t0)) s -> $out" >&2
echo "volcano=$out"
