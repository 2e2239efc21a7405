"""Tools built on the pure core, no I/O: ``explain`` (why a PodGroup waits, from the same functions
the cycle decides with), ``report`` (an explanation as text or stable JSON), ``workloads`` (a
workload's PodGroup, and who creates its pods), ``simulate`` (a workload trace replayed through
``cycle.schedule`` on a simulated clock) and ``traces`` (the trace schema: unknown keys and wrong
types refused, naming the field), ``sides`` (native backend: our queue gate or kube-scheduler).
Their commands are in ``vbridge.commands``.
"""

__all__ = ["explain", "report", "sides", "simulate", "traces", "workloads"]
