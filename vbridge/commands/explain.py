"""``vbridge explain podgroup NS/NAME``: list the cluster once, explain, print. The I/O side.

The kinds listed are the scheduler cache's (``scheduler.io.cache.KINDS``); one GET each, no
watch, so the answer reflects one moment. The explanation itself is :mod:`scheduler.tools.explain`.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
from typing import Any

from bridge import defaults, errors
from bridge.k8s import client, paths
from scheduler.api import building, resources
from scheduler.io import cache
from scheduler.tools import explain
from vbridge.commands import connecting
from vbridge.commands import scheduler as command

__all__ = ["add_parser", "fetch", "main"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``explain podgroup`` on ``parser.add_subparsers()``'s result."""
    p: argparse.ArgumentParser = subparsers.add_parser("explain", help="explain why the scheduler waits")
    kinds = p.add_subparsers(dest="kind", required=True)
    pg = kinds.add_parser("podgroup", help="why a PodGroup is not (fully) scheduled")
    pg.add_argument("name", metavar="NS/NAME")
    connecting.add_arguments(pg)
    pg.add_argument("--scheduler-name", default=defaults.SCHEDULER_NAME)
    pg.add_argument("--conf", default=None, help="volcano-scheduler.conf (default: Volcano's defaults)")
    pg.add_argument("--json", action="store_true", help="print the facts as JSON")
    pg.set_defaults(func=main)
    return p


async def fetch(api: client.Client) -> dict[str, list[dict[str, Any]]]:
    """Every object ``building.build`` reads, one list call per kind."""

    async def one(kind: str) -> list[dict[str, Any]]:
        api_version, plural = cache.KINDS[kind]
        try:
            return list((await api.request("GET", paths.resource(api_version, plural))).get("items") or [])
        except errors.ApiError as exc:
            if exc.status == 404 and kind != "nodes" and kind != "pods":
                return []  # CRDs not installed: no groups, no queues
            raise

    kinds = list(cache.KINDS)
    lists = await asyncio.gather(*(one(kind) for kind in kinds))
    return dict(zip(kinds, lists, strict=True))


def main(args: argparse.Namespace) -> int:
    if "/" not in args.name:
        raise errors.ConfigError(f"expected NS/NAME, got {args.name!r}")
    conf = command.load_config(args.conf, args.scheduler_name)
    conn = connecting.connection(args)

    async def listed() -> dict[str, list[dict[str, Any]]]:
        async with client.Client(conn) as api:
            return await fetch(api)

    objects = asyncio.run(listed())
    snap = building.build(**objects, scheduler_name=conf.scheduler_name)
    result = explain.explain(snap, conf, args.name)
    print(json.dumps(_plain(result), indent=2) if args.json else explain.render(result))
    return 0


def _plain(value: Any) -> Any:
    """Dataclasses and Resources as JSON-friendly values."""
    if isinstance(value, resources.Resource):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value
