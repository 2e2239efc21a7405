"""``--backend``, shared by ``serve``, ``controllers`` and ``up``; resolved at run time by
``bridge.k8s.backends.resolve`` (``auto``: native when the Workload API is served)."""

from __future__ import annotations

import argparse

from bridge import defaults

__all__ = ["add_argument"]


def add_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--backend",
        choices=defaults.BACKENDS,
        default=defaults.BACKEND,
        help="who places the gangs: volcano (our scheduler), native (kube-scheduler, Workload API "
        "scheduling.k8s.io/v1beta1, with our queues gating), auto (native when that API is served) "
        "(default %(default)s)",
    )
