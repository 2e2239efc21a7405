"""The ``vbridge`` command line.

Modules are imported by the command that needs them, so that a long-running service starts
without paying for every other command's imports (the scheduler's first cycle counts from its
start: the whole set takes ~0.6 s to import, the scheduler's own ~0.3 s).

``vbridge --version`` and ``vbridge version`` print the installed distribution's version
(package metadata, so pyproject.toml is its only source). A bare ``vbridge`` prints the help on
stderr and exits 2, as argparse does for any other missing argument. Exit codes are kubectl's:
0 done, 1 a command that failed (one line saying what to do: :func:`vbridge.commands.output.describe`
for the apiserver's answers), 2 a command line that cannot be read (argparse's errors and
:class:`bridge.errors.UsageError`). Developer commands are under ``vbridge dev``.
SIGINT and SIGTERM end every command within 1 s, at any point of its life, with the shell's 130
and 143: :mod:`vbridge.commands.interrupts`, installed before the command line is read.
``kubectl_main`` is the same command as the kubectl plugin ``kubectl-vbridge`` (its help and
errors say ``kubectl vbridge``).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

from vbridge.commands import interrupts

if __name__ == "__main__":  # `python -m vbridge.cli`: the handler before the heavier imports below
    interrupts.install()

from bridge import errors
from vbridge.commands import output

__all__ = [
    "DESCRIPTION",
    "DISTRIBUTION",
    "EXAMPLES",
    "EXTERNAL",
    "KUBECTL_PROG",
    "cmd_version",
    "kubectl_main",
    "main",
    "parser",
    "version",
]

DISTRIBUTION = "volcano-bridge"
# kubectl runs a plugin named kubectl-<name> found on PATH with the arguments after <name>.
KUBECTL_PROG = "kubectl vbridge"

# Subcommands defined in their own modules (each has ``add_parser(subparsers)``), by name.
EXTERNAL = {  # in the order the help lists them: what people run first, then the services, then dev
    "up": "vbridge.commands.up",
    "list": "vbridge.commands.listing",
    "explain": "vbridge.commands.explain",
    "job": "vbridge.commands.jobs",
    "queue": "vbridge.commands.jobs",
    "translate": "vbridge.commands.translate",
    "simulate": "vbridge.commands.simulate",
    "doctor": "vbridge.commands.doctor",
    "serve": "vbridge.commands.serve",
    "controllers": "vbridge.commands.controllers",
    "scheduler": "vbridge.commands.scheduler",
    "stop": "vbridge.commands.stop",
    "dev": "vbridge.commands.dev",
}
DESCRIPTION = "Volcano gang scheduling for unchanged Spark, Kubeflow and Volcano workloads."
EXAMPLES = """examples:
  vbridge up                              # a local cluster with the seed examples, until Ctrl-C
  vbridge list -A                         # PodGroups, Volcano Jobs and operator jobs, with their states
  vbridge explain tfjob/mnist -n team-a   # why a job waits
  vbridge translate -f old/ --converted-only | kubectl apply -f -

Commands that read a cluster find it as kubectl does (--kubeconfig, $KUBECONFIG, ~/.kube/config,
in-cluster) and take --context, -n/-A, -o wide|name|yaml|json, --no-headers, -l and -w where
they list. Exit status: 0 done, 1 failed, 2 a command line that cannot be read."""


def version() -> str:
    """The installed distribution's version, from its metadata."""
    import importlib.metadata

    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed: no package metadata)"


class _Version(argparse.Action):
    """``--version``, with the metadata read only when asked (not on every start)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, p: argparse.ArgumentParser, *_: object) -> None:
        print(f"vbridge {version()}", flush=True)
        p.exit()


def cmd_version(args: argparse.Namespace) -> int:
    print(f"vbridge {version()}", flush=True)
    return 0


def _add_external(sub: Any, module_name: str) -> None:
    module = importlib.import_module(module_name)
    register = getattr(module, "add_parser", None) or module.add_parsers
    register(sub)


def parser(command: str | None = None, *, prog: str = "vbridge") -> argparse.ArgumentParser:
    """The whole parser; for a subcommand of ``EXTERNAL``, only that one (and only its imports)."""
    p = output.Parser(prog=prog, description=DESCRIPTION, epilog=EXAMPLES)
    p.add_argument("--version", action=_Version, help="print the version and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if command in EXTERNAL:
        _add_external(sub, EXTERNAL[command])
        return p
    if command == "--version":
        return p  # nothing else is read
    for module_name in dict.fromkeys(EXTERNAL.values()):
        _add_external(sub, module_name)
    version_parser = sub.add_parser("version", help="print the version", description="Print the installed version.")
    version_parser.set_defaults(func=cmd_version)
    return p


def _usage_hint(prog: str, args: argparse.Namespace) -> str:
    words = [getattr(args, name, None) for name in ("command", "verb", "dev_command")]
    return f"run '{' '.join([prog, *(w for w in words if w)])} --help' for usage"


def main(argv: list[str] | None = None, *, prog: str = "vbridge") -> int:
    """Run one command: exit 0 on success, 1 when it failed (one line on stderr saying what to do),
    2 for a command line that cannot be read (argparse's code, as kubectl uses it), 128 + N when
    signal N ended it."""
    uninstall = interrupts.install()  # first: a signal during the imports ends the command too
    try:
        code = _run(sys.argv[1:] if argv is None else argv, prog)
    except BaseException:
        # A KeyboardInterrupt raised where the signal found the main thread (the command's
        # imports, a synchronous step) may come out as another error (a C extension's callback
        # wraps it): after a signal, whatever ends the command is the signal's doing.
        if not interrupts.received():
            raise
        code = None
    finally:
        uninstall()
    return interrupts.exit_code() or (130 if code is None else code)


def _run(argv: list[str], prog: str) -> int | None:
    """The command's status; None: interrupted by a KeyboardInterrupt of its own (no signal)."""
    if not argv:
        parser(prog=prog).print_help(sys.stderr)
        return 2
    args, extra = parser(argv[0] if argv else None, prog=prog).parse_known_args(argv)
    if extra:  # argparse would name the top-level parser; name the command's
        print(f"{prog}: error: unrecognized arguments: {' '.join(extra)}\n{_usage_hint(prog, args)}", file=sys.stderr)
        return 2
    try:
        return int(args.func(args))
    except Exception as exc:
        if interrupts.received():  # its error is the interrupt's doing (see main): no line for it
            return None
        return _answer(exc, prog, args)
    except KeyboardInterrupt:
        return None


def _answer(exc: Exception, prog: str, args: argparse.Namespace) -> int:
    """The status and the one line on stderr for a command's error (unexpected ones are raised)."""
    if isinstance(exc, errors.UsageError):
        print(f"{prog}: error: {exc}\n{_usage_hint(prog, args)}", file=sys.stderr)
        return 2
    if isinstance(exc, errors.ApiError):
        print(f"{prog}: error: {output.describe(exc)}", file=sys.stderr)
        return 1
    if isinstance(exc, errors.BridgeError):
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    if isinstance(exc, BrokenPipeError):  # `vbridge translate f | head`
        return 0
    from bridge.k8s import client  # not imported by every command (it imports aiohttp)

    if isinstance(exc, client.CONNECTION_ERRORS):
        print(f"{prog}: error: {output.describe(exc)}", file=sys.stderr)  # a dropped connection
        return 1
    if isinstance(exc, OSError):  # a file that cannot be read or written
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    raise exc


def kubectl_main(argv: list[str] | None = None) -> int:
    """The ``kubectl-vbridge`` console script: ``kubectl vbridge explain ...`` is ``vbridge explain ...``."""
    return main(argv, prog=KUBECTL_PROG)


if __name__ == "__main__":
    sys.exit(main())
