#!/usr/bin/env bash
# Build the Go binaries volcano-bridge runs (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, etcd; kwok, helm, kubeconform and toxiproxy-server) from the wrapper
# modules under tools/.
# Binaries land in .cache/bin/<component>-<version>-<go.sum hash>/; a warm run builds nothing.
# Prints the folder of each set as NAME=DIR lines on stdout; progress goes to stderr.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=readonly
cache="${VBRIDGE_BIN_CACHE:-$top/.cache/bin}"
mkdir -p "$cache"

modver() { # module version required by a wrapper's go.mod
  awk -v m="$2" '$1==m {print $2; exit} $1=="require" && $2==m {print $3; exit}' "$1/go.mod"
}
key() { cat "$1/go.mod" "$1/go.sum" | sha256sum | cut -c1-10; }  # content only: the checkout path must not matter

binname() { # what go build names a package's binary (a major-version suffix is dropped)
  local last; last=$(basename "$1")
  if [ "$1" = go.etcd.io/etcd/server/v3 ]; then echo etcd
  elif [ "$1" = github.com/Shopify/toxiproxy/v2/cmd/server ]; then echo toxiproxy-server
  elif [[ $last =~ ^v[0-9]+$ ]]; then basename "$(dirname "$1")"
  else echo "$last"; fi
}

build_set() { # NAME MODULE-DIR OUT-DIR LDFLAGS PKG...
  local name=$1 dir=$2 out=$3 ldflags=$4; shift 4
  local missing=0 p
  for p in "$@"; do [ -x "$out/$(binname "$p")" ] || missing=1; done
  if [ $missing = 0 ]; then echo "$name: cached in $out" >&2; echo "$name=$out"; return; fi
  if [ "${VBRIDGE_NO_BUILD:-}" = 1 ]; then echo "$name: not built yet in $out (VBRIDGE_NO_BUILD=1)" >&2; return 3; fi
  echo "$name: building $* (first build of this version takes minutes)" >&2
  local t0=$SECONDS tmp="$out.tmp.$$"
  mkdir -p "$tmp"
  (cd "$dir" && go mod download >&2 && go build -trimpath -ldflags "$ldflags" -o "$tmp/" "$@" >&2)
  for p in "$@"; do  # go names both etcd's and toxiproxy's binary after their directory, server
    if [ "$p" = go.etcd.io/etcd/server/v3 ] || [ "$(basename "$p")" = server ]; then mv "$tmp/server" "$tmp/$(binname "$p")"; fi
  done
  rm -rf "$out"; mv "$tmp" "$out"
  echo "$name: built in $((SECONDS - t0)) s -> $out" >&2
  echo "$name=$out"
}

cp_dir="$top/tools/controlplane"
k8s=$(modver "$cp_dir" k8s.io/kubernetes)
etcd=$(modver "$cp_dir" go.etcd.io/etcd/server/v3)
IFS=. read -r kmaj kmin _ <<<"${k8s#v}"
date=$(date -u -d @0 +%Y-%m-%dT%H:%M:%SZ)
ld="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ld="$ld -X $p.gitVersion=$k8s -X $p.gitMajor=$kmaj -X $p.gitMinor=$kmin -X $p.gitTreeState=clean -X $p.buildDate=$date -X $p.gitCommit=release-$k8s"
done
ld="$ld -X go.etcd.io/etcd/api/v3/version.GitSHA=release-$etcd"
build_set controlplane "$cp_dir" "$cache/k8s-$k8s-etcd-$etcd-$(key "$cp_dir")" "$ld" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl go.etcd.io/etcd/server/v3

# kubeconform: the chart tests validate `helm template` with it; toxiproxy: the reliability suite's
# network faults between the components and the apiserver (tests/reliability)
extras="kwok helm kubeconform toxiproxy"
[ "${VBRIDGE_BENCH_TOOLS:-}" = 1 ] && extras="$extras vegeta"  # bench/admission.py's constant-rate load generator
if [ "${VBRIDGE_SKIP_EXTRAS:-}" != 1 ]; then
  for extra in $extras; do
    d="$top/tools/$extra"; [ -f "$d/go.mod" ] || continue
    case $extra in
      kwok) pkg=sigs.k8s.io/kwok/cmd/kwok; mod=sigs.k8s.io/kwok ;;
      helm) pkg=helm.sh/helm/v3/cmd/helm; mod=helm.sh/helm/v3 ;;
      kubeconform) pkg=github.com/yannh/kubeconform/cmd/kubeconform; mod=github.com/yannh/kubeconform ;;
      toxiproxy) pkg=github.com/Shopify/toxiproxy/v2/cmd/server; mod=github.com/Shopify/toxiproxy/v2 ;;
      vegeta) pkg=github.com/tsenart/vegeta/v12; mod=github.com/tsenart/vegeta/v12 ;;
    esac
    v=$(modver "$d" "$mod")
    build_set "$extra" "$d" "$cache/$extra-$v-$(key "$d")" "-s -w" "$pkg" || echo "$extra: build failed (optional)" >&2
  done
fi
