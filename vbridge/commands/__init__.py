"""The larger ``vbridge`` subcommands, one module each, imported only when chosen.

Each module has ``add_parser(subparsers)`` (``jobs``: ``add_parsers``), reached through
``vbridge.cli``'s lazy table, and a ``main(args) -> int`` style entry: ``serve`` (admission
webhook and reconcilers), ``scheduler`` (the gang scheduler's process: cache, loop, leader
election, metrics), ``explain`` (why a PodGroup waits, from a live cluster), ``simulate`` (a
trace through the pure core), ``jobs`` (vcctl's verbs for Volcano Jobs and Queues).
``connecting`` holds the ``--kubeconfig`` and ``--context`` flags of every command that talks to
a cluster, resolved as kubectl resolves them (:func:`bridge.k8s.kubeconfigs.resolve`).
"""

__all__ = ["connecting", "explain", "jobs", "scheduler", "serve", "simulate"]
