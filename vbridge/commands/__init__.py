"""The larger ``vbridge`` subcommands, one module each, imported only when chosen.

Each module has ``add_parser(subparsers)`` (``jobs``: ``add_parsers``), reached through
``vbridge.cli``'s lazy table, and a ``run(args) -> int`` style entry: ``serve`` (admission webhook and reconcilers), ``scheduler``
(the gang scheduler's process: cache, loop, leader election, metrics), ``explain`` (why a
PodGroup waits, from a live cluster), ``simulate`` (a trace through the pure core), ``jobs``
(vcctl's verbs for Volcano Jobs and Queues). ``connecting`` holds the ``--kubeconfig`` and
``--context`` flags every command that talks to a cluster takes, resolved as kubectl resolves them.
"""

__all__ = ["connecting", "explain", "jobs", "scheduler", "serve", "simulate"]
