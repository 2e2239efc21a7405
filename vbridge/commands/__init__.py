"""The ``vbridge`` subcommands, one module each, imported only when chosen; and what they share.

Each command module has ``add_parser(subparsers)`` (``jobs``: ``add_parsers``), reached through
``vbridge.cli``'s lazy table, and a ``main(args) -> int`` style entry: ``up`` (the embedded
default), ``listing`` (``vbridge list``), ``explain`` (why a workload waits), ``jobs`` (vcctl's
verbs for Volcano Jobs and Queues), ``translate``, ``simulate`` (a trace through the pure core),
``doctor``, the services ``serve``, ``controllers`` and ``scheduler``, and ``dev`` (the
developers' commands). Shared: ``output`` (kubectl's conventions: options, tables, ``-o``, empty
lists, watches, one-line errors), ``connecting`` (``--kubeconfig``, ``--context`` and the
context's namespace, resolved as kubectl resolves them), ``live`` (``up``'s live view of
``listing``'s tables), ``leasing`` (leader election flags), ``interrupts`` (SIGINT and SIGTERM
end every command within 1 s: installed first by ``vbridge.cli.main``; every asyncio command
runs its main through ``interrupts.run``, not ``asyncio.run``), ``backends`` (``--backend``).
Also ``stop`` (the chart's pre-delete hook), and the pure parts of two commands:
``doctor_checks`` (``doctor``'s verdicts from observed objects) and ``queuetree`` (``vbridge queue
list``'s tree, from the scheduler's own queue tree and figures).
"""

__all__ = [
    "backends",
    "connecting",
    "controllers",
    "dev",
    "doctor",
    "doctor_checks",
    "explain",
    "interrupts",
    "jobs",
    "leasing",
    "listing",
    "live",
    "output",
    "queuetree",
    "scheduler",
    "serve",
    "simulate",
    "stop",
    "translate",
    "up",
]
