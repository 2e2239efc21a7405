# volcano-bridge: one image for every component (vbridge serve | scheduler | ...).
#
# Built here (no registry reachable) from a Debian-package base: tools/build-image.sh.
# On a normal machine:  docker build -t volcano-bridge:dev .   (or podman build)
ARG BASE=python:3.11-slim
# The build stage compiles the scheduler core (mypyc): a C compiler and the Python headers, with
# the same Python as BASE (the extensions are built for it). The runtime stage has neither.
ARG BUILD_BASE=python:3.11

# --- build: a wheel from the source, its hot path compiled, installed into a venv with its
#     runtime dependencies only ---
FROM ${BUILD_BASE} AS build
# Behind a TLS-intercepting proxy, pass its CA bundle (tools/build-image.sh mounts the host's).
ARG PIP_CERT
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
COPY pyproject.toml setup.py README.md LICENSE ./
COPY vbridge/ vbridge/
COPY bridge/ bridge/
COPY webhooks/ webhooks/
COPY scheduler/ scheduler/
COPY podgroup_templates/ podgroup_templates/
# mypyc type-checks what it compiles: the build venv holds the project's dependencies and stubs.
RUN python3 -m venv /opt/build \
 && /opt/build/bin/pip install --quiet "setuptools>=77" "mypy>=1.10" types-PyYAML . \
 && VBRIDGE_COMPILE=1 /opt/build/bin/pip wheel --quiet --no-build-isolation --no-deps --wheel-dir /dist . \
 && python3 -m venv /opt/vbridge \
 && /opt/vbridge/bin/pip install --quiet /dist/*.whl \
 && /opt/vbridge/bin/pip uninstall --quiet --yes pip \
 && mkdir -p /opt/vbridge/share \
 && cp -r podgroup_templates /opt/vbridge/share/podgroup_templates \
 && find /opt/vbridge -name __pycache__ -prune -exec rm -rf {} +

# --- runtime: the base, the venv, a numeric non-root user; nothing written at run time ---
FROM ${BASE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="volcano-bridge" \
      org.opencontainers.image.description="Gang scheduling with Volcano semantics for unchanged Spark and Kubeflow workloads" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=build /opt/vbridge /opt/vbridge
ENV PATH=/opt/vbridge/bin:/usr/local/bin:/usr/bin:/bin \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    VBRIDGE_TEMPLATES=/opt/vbridge/share/podgroup_templates
USER 65532:65532
ENTRYPOINT ["vbridge"]
CMD ["--help"]
