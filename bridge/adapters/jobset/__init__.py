"""JobSets (``jobset.x-k8s.io/v1alpha2``, JobSet v0.12), unchanged and gang-scheduled in stages.

- ``stages``: the stage rule: which pods of a JobSet exist together (``dependsOn``, ``InOrder``,
  exclusive topology's leaders and followers), the pods of each stage, and the room they need;
  the reasoning for one PodGroup per JobSet is its docstring;
- ``adapter``: the JobSet adapter: stamps each replicatedJob's pod template (schedulerName, the
  group, ``volcano.sh/task-spec`` = the replicatedJob's name) and makes the one PodGroup from the
  stages: the first stage is the gang, ``minResources`` the room of the whole; on the native
  backend each stage's templates join that stage's native PodGroup;
- ``pod``: on the native backend, a JobSet's pod whose ``schedulingGroup`` its controller
  dropped (one built on a ``k8s.io/api`` before v0.36 copies templates without it) gets it back.

All pure.
"""

__all__ = ["adapter", "pod", "stages"]
