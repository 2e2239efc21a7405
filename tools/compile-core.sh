#!/usr/bin/env bash
# Build the compiled scheduler core (mypyc, the modules pyproject.toml lists under
# [tool.vbridge] compiled) the way the image does, and install it into a tree that tests and
# benchmarks put first on PYTHONPATH. Prints that tree's path; progress on stderr.
# Cached by everything it is built from: a second run with the same sources only prints it.
#   tools/compile-core.sh            → .cache/compiled/<key>/site
# Needs a C compiler and the Python headers (python3-dev), as the image's build stage has.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$top"
cache="$top/.cache/compiled"
# The dev venv builds it: mypyc type-checks as the gates do, with the project's dependencies
# and stubs; its setuptools is as new as pyproject.toml's build-system asks (the test extra).
py="$top/.venv/bin/python"
key=$(
  {
    cat pyproject.toml setup.py
    find vbridge bridge webhooks scheduler -name '*.py' -print0 | sort -z | xargs -0 sha256sum
    "$py" -c 'import sys, mypy.version; print(mypy.version.__version__, sys.version)'
  } | sha256sum | cut -c1-16
)
dest="$cache/$key"
if [ ! -f "$dest/.done" ]; then
  echo "compiling the scheduler core with mypyc into $dest (about a minute)" >&2
  rm -rf "$dest"
  mkdir -p "$dest/src"
  # A copy to build from: mypyc and setuptools write build/ and egg-info where they run.
  cp -r pyproject.toml setup.py README.md LICENSE vbridge bridge webhooks scheduler "$dest/src/"
  find "$dest/src" -name __pycache__ -prune -exec rm -rf {} +
  (cd "$dest/src" && VBRIDGE_COMPILE=1 "$py" -m pip wheel --quiet --no-build-isolation --no-deps -w "$dest/wheel" .) >&2
  "$py" -m pip install --quiet --no-deps --no-compile --target "$dest/site" "$dest"/wheel/*.whl >&2
  rm -rf "$dest/src"
  touch "$dest/.done"
fi
find "$cache" -mindepth 1 -maxdepth 1 ! -name "$key" -exec rm -rf {} +  # older builds
echo "$dest/site"
