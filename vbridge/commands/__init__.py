"""The larger ``vbridge`` subcommands, one module each, imported only when chosen.

Each module has ``add(subparsers)`` or is reached through ``vbridge.cli``'s lazy table, and a
``run(args) -> int`` style entry: ``serve`` (admission webhook and reconcilers), ``scheduler``
(the gang scheduler's process: cache, loop, leader election, metrics), ``explain`` (why a
PodGroup waits, from a live cluster), ``simulate`` (a trace through the pure core), ``jobs``
(vcctl's verbs for Volcano Jobs and Queues).
"""

__all__ = ["explain", "jobs", "scheduler", "serve", "simulate"]
