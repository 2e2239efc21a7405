"""``--backend``, shared by every command: ``serve``, ``controllers`` and ``up`` take ``auto`` too,
resolved at run time by ``bridge.k8s.backends.resolve`` (native when the Workload API is served);
``scheduler`` names the backend outright; ``explain`` finds it from the cluster by default."""

from __future__ import annotations

import argparse

from bridge import defaults

__all__ = ["HELP", "add_argument"]


HELP = (
    "who places the gangs: volcano (our scheduler), native (kube-scheduler, Workload API "
    "scheduling.k8s.io/v1beta1, with our queues gating), auto (native when that API is served) "
    "(default %(default)s)"
)


def add_argument(
    p: argparse.ArgumentParser,
    *,
    choices: tuple[str, ...] = defaults.BACKENDS,
    help: str = HELP,
    default: str = defaults.BACKEND,
) -> None:
    p.add_argument("--backend", choices=choices, default=default, help=help)
