"""Tools built on the pure core, no I/O: ``explain`` (why a PodGroup waits, from the same functions
the cycle decides with), ``report`` (an explanation as text or stable JSON), ``workloads`` (a
workload's PodGroup, and who creates its pods), ``simulate`` (a workload trace replayed through
``cycle.schedule`` on a simulated clock), ``evictions`` and ``queueshare`` (explain's parts: what
the cycle evicts for a group, its queue's share), ``sides`` (native backend: our queue gate or
kube-scheduler), ``queuelevels`` (the queue tree's levels with what each holds and deserves,
for ``vbridge queue list``) and ``traces`` (the trace schema: unknown keys and wrong types
refused, naming the field). Their commands are in ``vbridge.commands``.
"""

__all__ = ["evictions", "explain", "queuelevels", "queueshare", "report", "sides", "simulate", "traces", "workloads"]
