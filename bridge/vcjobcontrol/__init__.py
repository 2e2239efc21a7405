"""The Volcano Job controller's pure core: its decisions, not its translation. Pure: no client, no
clock (the time is an argument), no randomness.

Contract: ``vbridge.controllers.vcjobs`` (and ``vcjob_create``) does the I/O around these;
the Job's translation (its spec, names, PodGroup, pods, plugins) is ``bridge.adapters.vcjob``,
which these read and which never imports them (``pyproject.toml``'s contracts).

- ``lifecycle``: the state machine: pod changes → events → policy actions → phase, status, and
  which pods to delete and create (retries: ``maxRetry``, restarts, ``TaskFailed``);
- ``starting``: ``dependsOn`` at run time: which tasks may have pods made now;
- ``waves``: which missing pods to create now: the gang together, the rest as pods get placed;
- ``creation``: pods that could not be created: the Warning Event, the status note, the backoff;
- ``pacing``: the slow-start batch sizes the controller's pod calls go through.

Every function takes the Job as an API dict (``bridge.adapters.vcjob.spec.defaulted`` first)
plus what was observed (its pods, the time as a string) and returns values.
"""

__all__ = ["creation", "lifecycle", "pacing", "starting", "waves"]
