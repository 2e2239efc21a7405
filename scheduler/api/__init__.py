"""The scheduler's data: immutable inputs and outputs of a cycle, and the bulk views over them.

- ``snapshot``: ``Snapshot`` (nodes, jobs, tasks, queues, task columns) and ``TaskStatus``;
- ``building``: API dicts (as the kube-apiserver returns them) → ``Snapshot``;
- ``podfacts``: what a build derives from one pod, and the memo that keeps it across builds;
- ``resources``: requests as vectors over the snapshot's resource dimensions;
- ``podspec``: placement constraints read from a pod (selectors, affinity, tolerations);
- ``queuetree``: the queue tree under ``root``, from ``spec.parent`` or Volcano's older annotations;
- ``tally``: the task index: counts and sums per job and per task in bulk (numpy);
- ``plan``: the cycle's output: ordered operations and verdicts;
- ``owners``: who creates a group's pods, by the kind that owns it (the operator named).

Nothing here knows of sessions, plugins or actions.
"""

__all__ = ["building", "owners", "plan", "podfacts", "podspec", "queuetree", "resources", "snapshot", "tally"]
