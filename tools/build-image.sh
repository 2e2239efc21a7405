#!/usr/bin/env bash
# Build the volcano-bridge image here, where no container registry is reachable:
#   1. a base image from Debian packages (mmdebstrap: python3 + python3-venv), cached by suite;
#   2. the project's Dockerfile on that base (buildah, vfs storage, chroot isolation).
# Prints the image name on stdout; progress on stderr. A warm run rebuilds only step 2.
# On a normal machine use the Dockerfile as it is: `docker build -t volcano-bridge:dev .`.
#
#   tools/build-image.sh [TAG]        (default TAG: localhost/volcano-bridge:dev)
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tag="${1:-localhost/volcano-bridge:dev}"
suite="${VBRIDGE_IMAGE_SUITE:-bookworm}"  # Debian 12: Python 3.11, as requires-python says
base="localhost/debian-python:$suite"
build_base="localhost/debian-python-build:$suite"  # base + a C compiler and headers: the compiled core
cache="$top/.cache/image"
mkdir -p "$cache"

need() { command -v "$1" >/dev/null 2>&1; }
if ! need podman || ! need buildah || ! need mmdebstrap || ! need runc; then
  echo "installing podman, buildah, mmdebstrap, runc (apt-get)" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman buildah mmdebstrap runc >&2
fi

# This machine: cgroup v1 mounts and no CAP_SYS_RESOURCE, so podman's default ulimits cannot be
# set and crun refuses the cgroup layout; runc with cgroupfs and vfs storage work.
conf="$cache/containers.conf"
printf '[containers]\ndefault_ulimits = []\n' >"$conf"
export CONTAINERS_CONF="$conf"
store=(--storage-driver=vfs)

debian_image() {  # NAME PACKAGES: an image of the suite with those packages, cached as a tarball
  local name="$1" packages="$2" tar part
  if podman "${store[@]}" image exists "$name"; then
    return
  fi
  tar="$cache/${name##*/}.tar"; tar="${tar/:/-}"
  if [ ! -s "$tar" ]; then
    echo "$name: mmdebstrap $suite with $packages (a minute or two)" >&2
    part="$tar.partial.tar"  # the .tar ending tells mmdebstrap to write a tarball
    mmdebstrap --quiet --variant=apt --include="$packages" "$suite" "$part" >&2
    mv "$part" "$tar"
  fi
  podman "${store[@]}" import "$tar" "$name" >&2
}
debian_image "$base" python3,python3-venv,ca-certificates
debian_image "$build_base" python3,python3-venv,python3-dev,gcc,libc6-dev,ca-certificates

version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$top/pyproject.toml" | head -1)
echo "building $tag from $base (version $version)" >&2
ca=(); hostca=/etc/ssl/certs/ca-certificates.crt
if [ -s "$hostca" ]; then  # the host's CA bundle, for a proxy between us and the package index
  ca=(--volume "$hostca:/run/host-ca.crt:ro" --build-arg PIP_CERT=/run/host-ca.crt)
fi
buildah "${store[@]}" bud --quiet --isolation chroot --layers=false "${ca[@]}" \
  --build-arg "BASE=$base" --build-arg "BUILD_BASE=$build_base" --build-arg "VERSION=$version" -t "$tag" "$top" >&2
podman "${store[@]}" image prune --force >/dev/null  # the tag's previous build (vfs keeps whole copies)
echo "$tag"
