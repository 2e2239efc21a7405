#!/usr/bin/env bash
# Build the upstream operators volcano-bridge is tested against (Kubeflow spark-operator,
# training-operator v1, mpi-operator; and, named as an argument, the JobSet controller) from the wrapper modules under tools/, the same way
# tools/build-binaries.sh builds the control plane. Each operator pins its own Kubernetes
# libraries, so each has its own wrapper module (go.mod + go.sum, with the operator's own replaces).
# Binaries land in .cache/bin/<operator>-<version>-<go.sum hash>/; a warm run builds nothing.
# Prints NAME=DIR lines on stdout; progress goes to stderr. Operators to build can be named as
# arguments (default: all three). A failed build is reported and the next one still runs; the
# exit status is 1 if any failed.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=readonly
cache="${VBRIDGE_BIN_CACHE:-$top/.cache/bin}"
mkdir -p "$cache"

modver() { awk -v m="$2" '$1==m {print $2; exit} $1=="require" && $2==m {print $3; exit}' "$1/go.mod"; }
key() { cat "$1/go.mod" "$1/go.sum" | sha256sum | cut -c1-10; }  # content only: the checkout path must not matter

build_op() { # NAME MODULE PACKAGE BINARY LDFLAGS
  local name=$1 mod=$2 pkg=$3 bin=$4 ldflags=$5
  local dir="$top/tools/$name" v out
  v=$(modver "$dir" "$mod")
  out="$cache/$name-$v-$(key "$dir")"
  if [ -x "$out/$bin" ]; then echo "$name: cached in $out" >&2; echo "$name=$out"; return; fi
  if [ "${VBRIDGE_NO_BUILD:-}" = 1 ]; then echo "$name: not built yet in $out (VBRIDGE_NO_BUILD=1)" >&2; return 3; fi
  echo "$name: building $pkg $v (first build takes minutes)" >&2
  local t0=$SECONDS tmp="$out.tmp.$$"
  rm -rf "$tmp"; mkdir -p "$tmp"
  if ! (cd "$dir" && go mod download >&2 && go build -trimpath -ldflags "$ldflags" -o "$tmp/$bin" "$pkg" >&2); then
    rm -rf "$tmp"; echo "$name: build FAILED after $((SECONDS - t0)) s" >&2; return 1
  fi
  rm -rf "$out"; mv "$tmp" "$out"
  echo "$name: built in $((SECONDS - t0)) s -> $out" >&2
  echo "$name=$out"
}

date=$(date -u -d @0 +%Y-%m-%dT%H:%M:%SZ)
want=("$@"); [ ${#want[@]} = 0 ] && want=(spark-operator training-operator mpi-operator)
rc=0
for op in "${want[@]}"; do
  case $op in
    spark-operator)
      # The release Makefile stamps component-base's version; keep that so `--version` says v2.5.2.
      v=$(modver "$top/tools/$op" github.com/kubeflow/spark-operator/v2)
      build_op "$op" github.com/kubeflow/spark-operator/v2 github.com/kubeflow/spark-operator/v2/cmd/operator \
        spark-operator "-s -w -X k8s.io/component-base/version.gitVersion=$v -X k8s.io/component-base/version.gitCommit=release-$v -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/component-base/version.buildDate=$date" || rc=1 ;;
    training-operator)
      build_op "$op" github.com/kubeflow/training-operator github.com/kubeflow/training-operator/cmd/training-operator.v1 \
        training-operator "-s -w" || rc=1 ;;
    mpi-operator)
      v=$(modver "$top/tools/$op" github.com/kubeflow/mpi-operator)
      build_op "$op" github.com/kubeflow/mpi-operator github.com/kubeflow/mpi-operator/cmd/mpi-operator \
        mpi-operator "-s -w -X github.com/kubeflow/mpi-operator/pkg/version.Version=$v -X github.com/kubeflow/mpi-operator/pkg/version.GitSHA=release-$v -X github.com/kubeflow/mpi-operator/pkg/version.Built=$date" || rc=1 ;;
    jobset)
      # The JobSet controller (sigs.k8s.io/jobset, main at the module's root). Not in the default
      # set yet: built on request (tools/build-operators.sh jobset) until its live suite lands.
      v=$(modver "$top/tools/$op" sigs.k8s.io/jobset)
      build_op "$op" sigs.k8s.io/jobset sigs.k8s.io/jobset jobset-controller \
        "-s -w -X sigs.k8s.io/jobset/pkg/version.GitVersion=$v -X sigs.k8s.io/jobset/pkg/version.GitCommit=release-$v" || rc=1 ;;
    *) echo "unknown operator: $op" >&2; rc=2 ;;
  esac
done
exit $rc
