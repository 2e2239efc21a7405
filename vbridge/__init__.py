"""volcano-bridge's composition root: the ``vbridge`` command and the processes it runs.

Layers, top to bottom (checked by the import-linter contracts in ``pyproject.toml``):

1. ``vbridge`` commands: ``cli`` (the ``vbridge`` entry point), ``commands`` (one module per
   larger subcommand), ``runtime`` (what ``vbridge serve`` runs: facts, the admission server and
   the reconcilers), ``embedded`` (``vbridge up``: a local control plane, simulated nodes, the
   bridge and the scheduler in one process), ``chartgen`` (the chart's generated parts).
2. Beside ``webhooks`` and ``scheduler``: ``vbridge.controllers`` (the reconcilers, built from the
   adapter registry), and the test bed, ``vbridge.localcluster`` (a control plane on loopback) and
   ``vbridge.nodesim`` (simulated nodes). None of these imports a module of layer 1.
3. ``bridge``, the kernel: everything above may import it; it imports nothing above it.
"""

__all__ = ["chartgen", "cli", "commands", "controllers", "embedded", "localcluster", "nodesim", "runtime"]
