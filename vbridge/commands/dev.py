"""``vbridge dev …``: the developers' commands, kept apart from the ones users run.

- ``dev crds``: the CRDs generated from ``bridge.models``: printed on stdout (a YAML stream), or
  ``--write`` into ``--dir``, or ``--check`` that ``--dir`` holds them (exit 1 when stale). It
  never writes unless told to.
- ``dev chart``: the chart's generated parts (from the adapter registry): ``--check`` (default)
  or ``--write``.
- ``dev build``: build (or find cached) the Go binaries of the test bed.
"""

from __future__ import annotations

import argparse
import pathlib
from typing import Any

from vbridge.commands import output

__all__ = ["add_parser", "build", "chart", "crds"]


def crds(args: argparse.Namespace) -> int:
    from bridge import crdgen

    folder = pathlib.Path(args.dir)
    if args.check:
        stale = crdgen.check(folder)
        if stale:
            output.write(f"out of date in {folder}: {', '.join(stale)}; run `vbridge dev crds --write`", True)
            return 1
        output.write(f"CRDs in {folder} are up to date")
        return 0
    if args.write:
        for path in crdgen.write(folder):
            output.write(f"wrote {path}")
        return 0
    output.write("---\n".join(crdgen.render(info) for info in crdgen.ALL).rstrip("\n"))
    return 0


def chart(args: argparse.Namespace) -> int:
    from vbridge import chartgen

    if args.write:
        for path in chartgen.write():
            output.write(f"wrote {path}")
        return 0
    stale = chartgen.check()
    if stale:
        output.write(f"chart out of date: {', '.join(stale)}; run `vbridge dev chart --write`", True)
        return 1
    output.write("chart is up to date")
    return 0


def build(args: argparse.Namespace) -> int:
    from vbridge.localcluster import binaries

    bins = binaries.ensure(extras=not args.no_extras)
    output.write(f"control plane: {bins.folder}")
    for name, folder in bins.extras.items():
        output.write(f"{name}: {folder}")
    return 0


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``dev`` (and its commands) on ``parser.add_subparsers()``'s result."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "dev",
        help="developer commands: generate the CRDs and the chart's parts, build the Go binaries",
        description="Commands for working on volcano-bridge itself.",
    )
    sub = p.add_subparsers(dest="dev_command", required=True, metavar="COMMAND")
    c = sub.add_parser(
        "crds",
        help="the CRDs generated from bridge/models: print them, --write them or --check them",
        description="Print the CRDs generated from bridge/models (a YAML stream), or write or check a folder.",
        epilog="examples:\n  vbridge dev crds | kubectl apply -f -\n  vbridge dev crds --check\n",
    )
    c.add_argument("--dir", default="crds", help="the folder --write and --check use")
    mode = c.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write them into --dir")
    mode.add_argument("--check", action="store_true", help="exit 1 if --dir does not hold them as generated")
    c.set_defaults(func=crds)
    h = sub.add_parser(
        "chart",
        help="check (default) or --write the chart's generated parts",
        description="The chart's files generated from the adapter registry: check them, or --write them.",
    )
    mode = h.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write them into charts/volcano-bridge")
    mode.add_argument("--check", action="store_true", help="exit 1 if they are stale (what it does by default)")
    h.set_defaults(func=chart)
    b = sub.add_parser("build", help="build (or find cached) the Go binaries of the test bed")
    b.add_argument("--no-extras", action="store_true", help="skip kwok and helm")
    b.set_defaults(func=build)
    return p
